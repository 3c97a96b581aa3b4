import Geo
import RoadServers
import Roads
import Testing

/// The embedded provider passes the checks every provider passes, on the same Helsinki trips, and
/// agrees with pgRouting — the same extract, imported by osm2pgrouting — on their distances.
@Suite struct EmbeddedConformanceTests {
    @Test func theEmbeddedProviderPassesTheSharedChecks() async throws {
        let embedded = try EmbeddedRoutes.helsinki()
        await RouteProviderConformance.check(embedded, pairs: HelsinkiPairs.pairs)
        await RouteProviderConformance.checkOutside(
            embedded, inside: HelsinkiPairs.railwaySquare, outside: GeoPoint(latitude: 60.3, longitude: 25.3))
        await RouteProviderConformance.checkInvalid(embedded, inside: HelsinkiPairs.railwaySquare)
    }

    @Test func embeddedAndPgRoutingAgreeWithinFivePercent() async throws {
        let address = try await HelsinkiDatabase.imported().address
        let pgRouting = PgRoutingRoutes(address: address, timeout: HelsinkiDatabase.queryDeadline, logger: HelsinkiDatabase.logger)
        try await RouteProviderConformance.checkAgree(pgRouting, try EmbeddedRoutes.helsinki(), pairs: HelsinkiPairs.pairs, tolerance: 0.05)
    }

    /// Beyond the chosen pairs: trips between points drawn with a fixed seed over the extract's
    /// box (many off the roads or in its corners). Both providers model the same network, so each
    /// trip either has a route from both, within 5%, or from neither, for the same reason.
    @Test func embeddedAndPgRoutingAgreeAcrossTheExtract() async throws {
        let address = try await HelsinkiDatabase.imported().address
        let pgRouting = PgRoutingRoutes(address: address, timeout: HelsinkiDatabase.queryDeadline, logger: HelsinkiDatabase.logger)
        let embedded = try EmbeddedRoutes.helsinki()
        var state: UInt64 = 0x2354_4865_6c73_696e
        func next(_ range: ClosedRange<Double>) -> Double {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return range.lowerBound + Double(state >> 11) / Double(1 << 53) * (range.upperBound - range.lowerBound)
        }
        func point() -> GeoPoint { GeoPoint(latitude: next(60.1642...60.1791), longitude: next(24.9352...24.9534)) }
        var routed = 0
        for _ in 0..<100 {
            let (start, end) = (point(), point())
            let fromPgRouting = await Self.result(pgRouting, from: start, to: end)
            let fromEmbedded = await Self.result(embedded, from: start, to: end)
            switch (fromPgRouting, fromEmbedded) {
            case (.success(let a), .success(let b)):
                routed += 1
                #expect(
                    abs(a.distance - b.distance) <= 0.05 * max(a.distance, b.distance),
                    "\(start) → \(end): pgrouting \(Int(a.distance)) m, embedded \(Int(b.distance)) m")
            case (.failure(let a), .failure(let b)):
                #expect(a == b, "\(start) → \(end): pgrouting \(a), embedded \(b)")
            default:
                Issue.record("\(start) → \(end): pgrouting \(fromPgRouting), embedded \(fromEmbedded)")
            }
        }
        #expect(routed > 80, "most of the box is within reach of a street")
    }

    static func result(_ provider: any RouteProvider, from start: GeoPoint, to end: GeoPoint) async -> Result<Route, RouteError> {
        do throws(RouteError) { return .success(try await provider.route(from: start, to: end)) } catch { return .failure(error) }
    }
}
