import Geo
import Roads
import Testing

/// `StreetGrid` finds what reading every edge finds: the segments with an end within the radius,
/// each once, in the graph's order — checked against that reading around many points of the city.
@Suite struct StreetGridTests {
    /// The reference: every edge read, each pair of nodes once.
    static func everyEdge(of graph: RoadGraph, around center: GeoPoint, radius: Double) -> [[[Double]]] {
        var seen = Set<UInt64>()
        var lines: [[[Double]]] = []
        for edge in graph.edges {
            let (a, b) = (Int(edge.from), Int(edge.to))
            guard seen.insert(UInt64(min(a, b)) << 32 | UInt64(max(a, b))).inserted else { continue }
            let (p, q) = (graph.points[a], graph.points[b])
            if center.distance(to: p) <= radius || center.distance(to: q) <= radius { lines.append([p.coordinates, q.coordinates]) }
        }
        return lines
    }

    @Test func theGridFindsExactlyWhatReadingEveryEdgeFinds() throws {
        let graph = try RoadGraph.helsinki()
        let grid = StreetGrid(graph: graph)
        var generator = SystemRandomNumberGenerator()
        var compared = 0
        for step in 0..<40 {
            let node = graph.points[Int.random(in: 0..<graph.points.count, using: &generator)]
            let center = node.destination(bearing: Double(step * 37 % 360), distance: Double(step * 23 % 400))
            let radius = [50.0, 300, 1000, 5000][step % 4]
            let found = grid.segments(around: center, radius: radius).map { [$0.0.coordinates, $0.1.coordinates] }
            #expect(found == Self.everyEdge(of: graph, around: center, radius: radius), "around \(center), \(radius) m")
            compared += found.count
        }
        #expect(compared > 1000, "the points were in the city: \(compared) segments")
        #expect(grid.segments(around: GeoPoint(latitude: -33.9, longitude: 18.4), radius: 5000).isEmpty, "outside the data: none")
    }
}
