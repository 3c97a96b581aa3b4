import Roads
import Testing

/// `StraightLineRoutes` passes the checks that apply to it: it has no road data, so it has no
/// point outside it, and its routes are `.straightLine`.
@Suite struct StraightLineConformanceTests {
    @Test func conformsOnTheHelsinkiPairs() async {
        await RouteProviderConformance.check(StraightLineRoutes(), pairs: HelsinkiPairs.pairs, snapDistance: 0, kind: .straightLine)
    }
}
