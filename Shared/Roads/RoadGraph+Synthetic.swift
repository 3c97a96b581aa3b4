import Foundation
import Geo

extension RoadGraph {
    /// A made-up city of at least `edges` directed edges, for benchmarks and tests of a metropolitan
    /// graph: a square grid of streets 120 m apart around `center`, nodes nudged up to 15 m off the
    /// grid (so no two routes tie), an avenue every 8th street (60 km/h, both ways), and of the other
    /// streets (30 km/h) every 4th one way, alternating direction. Deterministic for a `seed`.
    public static func syntheticCity(
        edges wanted: Int, center: GeoPoint = GeoPoint(latitude: 60.1699, longitude: 24.9384), seed: UInt64 = 1
    ) throws(RoadGraphError)
        -> RoadGraph
    {
        var side = 2
        while directedEdges(side: side) < wanted { side += max(1, side / 16) }
        var random = seed == 0 ? 0x9E37_79B9_7F4A_7C15 : seed
        func jitter() -> Double {
            random ^= random << 13
            random ^= random >> 7
            random ^= random << 17
            return (Double(random % 3001) / 100) - 15
        }
        let spacing = 120.0
        let metresPerDegree = Earth.meanRadius * .pi / 180
        let perLongitude = metresPerDegree * cos(center.latitude * .pi / 180)
        let half = Double(side - 1) * spacing / 2
        var points: [GeoPoint] = []
        points.reserveCapacity(side * side)
        for row in 0..<side {
            for column in 0..<side {
                let x = Double(column) * spacing - half + jitter()
                let y = Double(row) * spacing - half + jitter()
                points.append(GeoPoint(latitude: center.latitude + y / metresPerDegree, longitude: center.longitude + x / perLongitude))
            }
        }
        var names: [String] = []
        var roads: [Edge] = []
        roads.reserveCapacity(wanted + wanted / 8)
        func street(_ line: Int, along rows: Bool, nodes: [Int]) {
            let avenue = line % 8 == 0
            let name = Int32(names.count)
            names.append(avenue ? "\(rows ? "East" : "North") Avenue \(line / 8 + 1)" : "\(rows ? "Row" : "Column") Street \(line + 1)")
            let speed = avenue ? 60.0 : 30.0
            let oneWay = !avenue && line % 4 == 1
            let forwards = line % 8 < 4
            for (a, b) in zip(nodes, nodes.dropFirst()) {
                let length = points[a].distance(to: points[b])
                if !oneWay || forwards { roads.append(Edge(from: Int32(a), to: Int32(b), length: length, speed: speed, name: name)) }
                if !oneWay || !forwards { roads.append(Edge(from: Int32(b), to: Int32(a), length: length, speed: speed, name: name)) }
            }
        }
        for row in 0..<side { street(row, along: true, nodes: (0..<side).map { row * side + $0 }) }
        for column in 0..<side { street(column, along: false, nodes: (0..<side).map { $0 * side + column }) }
        return try RoadGraph(points: points, edges: roads, names: names)
    }

    /// Directed edges of a `side` × `side` synthetic city.
    private static func directedEdges(side: Int) -> Int {
        let oneWay = (0..<side).filter { $0 % 8 != 0 && $0 % 4 == 1 }.count
        let segmentsPerStreet = side - 1
        return 2 * (2 * side - 2 * oneWay) * segmentsPerStreet + 2 * oneWay * segmentsPerStreet
    }
}
