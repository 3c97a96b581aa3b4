import Geo

#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A graph's street segments — each pair of nodes once, whichever directions the road allows — by
/// the grid cell of each end, so the streets around a point are found by reading a few cells
/// rather than every edge of the city (the share page and the dashboard ask for them, publicly).
public struct StreetGrid: Sendable {
    /// A cell's side in degrees of latitude and of longitude: about 550 m north–south.
    public static let cellDegrees = 0.005

    private let points: [GeoPoint]
    /// The segments, as the graph's edges list them first.
    private let segments: [(a: Int32, b: Int32)]
    /// Cell → the segments with an end in it.
    private let cells: [Int64: [Int32]]

    public init(graph: RoadGraph) {
        points = graph.points
        var seen = Set<UInt64>()
        var segments: [(a: Int32, b: Int32)] = []
        var cells: [Int64: [Int32]] = [:]
        for edge in graph.edges {
            let (a, b) = (Int(edge.from), Int(edge.to))
            guard graph.points.indices.contains(a), graph.points.indices.contains(b) else { continue }
            guard seen.insert(UInt64(min(a, b)) << 32 | UInt64(max(a, b))).inserted else { continue }
            let index = Int32(segments.count)
            segments.append((edge.from, edge.to))
            let (first, second) = (Self.cell(graph.points[a]), Self.cell(graph.points[b]))
            cells[first, default: []].append(index)
            if second != first { cells[second, default: []].append(index) }
        }
        self.segments = segments
        self.cells = cells
    }

    /// The segments with an end within `radius` metres of `center`, each once, in the graph's order.
    public func segments(around center: GeoPoint, radius: Double) -> [(GeoPoint, GeoPoint)] {
        let latitudeSpan = radius / (Earth.meanRadius * .pi / 180)
        let longitudeSpan = latitudeSpan / max(cos(center.latitude * .pi / 180), 0.01)
        let (south, north) = (Self.row(center.latitude - latitudeSpan), Self.row(center.latitude + latitudeSpan))
        let (west, east) = (Self.column(center.longitude - longitudeSpan), Self.column(center.longitude + longitudeSpan))
        guard (north - south + 1) * (east - west + 1) <= 10_000 else { return [] }
        var found = Set<Int32>()
        for row in south...north {
            for column in west...east {
                for index in cells[Self.key(row, column)] ?? [] {
                    let (a, b) = segments[Int(index)]
                    if center.distance(to: points[Int(a)]) <= radius || center.distance(to: points[Int(b)]) <= radius {
                        found.insert(index)
                    }
                }
            }
        }
        return found.sorted().map { (points[Int(segments[Int($0)].a)], points[Int(segments[Int($0)].b)]) }
    }

    private static func row(_ latitude: Double) -> Int64 { Int64((latitude / cellDegrees).rounded(.down)) }
    private static func column(_ longitude: Double) -> Int64 { Int64((longitude / cellDegrees).rounded(.down)) }
    /// Unique while a column is within ±50 000 (the whole globe is ±36 000).
    private static func key(_ row: Int64, _ column: Int64) -> Int64 { row * 100_000 + column }
    private static func cell(_ point: GeoPoint) -> Int64 { key(row(point.latitude), column(point.longitude)) }
}
