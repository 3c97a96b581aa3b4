import Geo
import Roads
import Testing

/// A* with its heuristic finds the quickest route: from node to node it agrees with a plain
/// Dijkstra (no heuristic, written the simplest way) on the built-in graph.
@Suite struct OptimalityTests {
    /// Seconds from `source` to every node, O(n²) — slow and obviously right.
    static func dijkstra(_ graph: RoadGraph, from source: Int) -> [Double] {
        var seconds = [Double](repeating: .infinity, count: graph.points.count)
        var done = [Bool](repeating: false, count: graph.points.count)
        seconds[source] = 0
        for _ in graph.points.indices {
            guard let node = graph.points.indices.filter({ !done[$0] }).min(by: { seconds[$0] < seconds[$1] }), seconds[node].isFinite
            else { break }
            done[node] = true
            for index in graph.edges(from: node) {
                let edge = graph.edges[index]
                seconds[Int(edge.to)] = min(seconds[Int(edge.to)], seconds[node] + edge.duration)
            }
        }
        return seconds
    }

    @Test func aStarAgreesWithDijkstraFromNodeToNode() throws {
        let routes = try EmbeddedRoutes.helsinki()
        let graph = routes.graph
        var random = Xorshift(seed: 5)
        for _ in 0..<8 {
            let source = Int(random.next() % UInt64(graph.points.count))
            let expected = Self.dijkstra(graph, from: source)
            for _ in 0..<10 {
                let target = Int(random.next() % UInt64(graph.points.count))
                let route = try routes.shortestRoute(from: graph.points[source], to: graph.points[target])
                #expect(abs(route.duration - expected[target]) < 1e-6 * expected[target] + 1e-6, "node \(source) → \(target)")
            }
        }
    }
}
