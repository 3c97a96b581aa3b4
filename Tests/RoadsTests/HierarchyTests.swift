import Geo
import Roads
import Testing

/// The contraction hierarchy finds the same quickest routes as A*: the same time, the same length
/// and the same streets, between points along the roads of the built-in graph and of a synthetic
/// city with one-way streets.
@Suite struct HierarchyTests {
    /// Points on the roads: a random edge, a random share of it.
    static func pairs(on graph: RoadGraph, count: Int, seed: UInt64) -> [(GeoPoint, GeoPoint)] {
        var random = Xorshift(seed: seed)
        func point() -> GeoPoint {
            let edge = graph.edges[Int(random.next() % UInt64(graph.edges.count))]
            let share = Double(random.next() % 1000) / 1000
            let (from, to) = (graph.points[Int(edge.from)], graph.points[Int(edge.to)])
            return GeoPoint(
                latitude: from.latitude + (to.latitude - from.latitude) * share,
                longitude: from.longitude + (to.longitude - from.longitude) * share)
        }
        return (0..<count).map { _ in (point(), point()) }
    }

    static func expectSameRoutes(_ graph: RoadGraph, pairs: [(GeoPoint, GeoPoint)]) throws {
        let aStar = EmbeddedRoutes(graph: graph)
        let hierarchy = ContractionHierarchy(graph: graph)
        let contracted = EmbeddedRoutes(graph: graph, hierarchy: hierarchy)
        for (start, end) in pairs {
            let expected = try aStar.shortestRoute(from: start, to: end)
            let route = try contracted.shortestRoute(from: start, to: end)
            #expect(
                abs(route.duration - expected.duration) <= 1e-6 * expected.duration + 1e-6,
                "\(start) → \(end): \(route.duration) s, A* \(expected.duration) s")
            #expect(abs(route.distance - route.steps.reduce(0) { $0 + $1.distance }) < 0.01, "the steps add up to the route")
            #expect(route.line.points.first == expected.line.points.first && route.line.points.last == expected.line.points.last)
        }
    }

    @Test func onTheBuiltInGraphItAgreesWithAStar() throws {
        let graph = try RoadGraph.helsinki()
        try Self.expectSameRoutes(graph, pairs: Self.pairs(on: graph, count: 400, seed: 7))
    }

    @Test func onASyntheticCityWithOneWayStreetsItAgreesWithAStar() throws {
        let graph = try RoadGraph.syntheticCity(edges: 20_000, seed: 3)
        #expect(graph.edges.count >= 20_000 && graph.edges.count < 26_000, "\(graph.edges.count)")
        try Self.expectSameRoutes(graph, pairs: Self.pairs(on: graph, count: 300, seed: 11))
    }

    @Test func aSyntheticCityIsTheSameForTheSameSeedAndOfTheSizeAsked() throws {
        let one = try RoadGraph.syntheticCity(edges: 5_000, seed: 9)
        let again = try RoadGraph.syntheticCity(edges: 5_000, seed: 9)
        let other = try RoadGraph.syntheticCity(edges: 5_000, seed: 10)
        #expect(one.points == again.points && one.edges == again.edges && one.names == again.names)
        #expect(one.points != other.points)
        #expect(one.edges.count >= 5_000 && Set(one.edges.map(\.speed)) == [30, 60])
    }
}
