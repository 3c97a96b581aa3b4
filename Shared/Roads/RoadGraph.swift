import Foundation
import Geo

/// A directed road network: nodes with positions, one-way-aware edges with lengths and car speeds,
/// and street names. Read from a graph file (`RoadGraph(contentsOf:)`, `RoadGraph.helsinki()`;
/// format in docs/roads.md) or built in memory (`init(points:edges:names:)`, for tests and tools).
///
/// Edges are kept sorted by their start node, with offsets per node (compressed sparse rows): the
/// search reads a node's way out as one contiguous slice.
public struct RoadGraph: Sendable {
    /// One direction of a road between two consecutive nodes.
    public struct Edge: Sendable, Equatable {
        public var from: Int32
        public var to: Int32
        /// Metres.
        public var length: Double
        /// Car speed in km/h (the way's maxspeed, else its highway type's default).
        public var speed: Double
        /// Index into `names`, or nil for an unnamed road.
        public var name: Int32?

        public init(from: Int32, to: Int32, length: Double, speed: Double, name: Int32?) {
            self.from = from
            self.to = to
            self.length = length
            self.speed = speed
            self.name = name
        }

        /// Seconds to drive it.
        public var duration: Double { length / (speed / 3.6) }
    }

    /// The format version of graph files this code reads.
    public static let formatVersion: UInt32 = 1

    public let points: [GeoPoint]
    /// Sorted by `from` (then `to`), so `edges(from:)` is a slice.
    public let edges: [Edge]
    public let names: [String]
    /// `edges` of node n are `firstEdge[n]..<firstEdge[n + 1]`.
    let firstEdge: [Int]
    /// Seconds per edge, computed once for the search.
    let durations: [Double]
    /// The fastest speed in the graph, m/s: the A* heuristic may not assume anything faster.
    let maxSpeed: Double
    /// Metres per degree of longitude at the graph's latitude farthest from the equator (0 for a
    /// graph across the antimeridian), for `lowerBound`.
    private let metresPerDegreeLongitude: Double

    /// Checks every index and value, then sorts the edges.
    public init(points: [GeoPoint], edges: [Edge], names: [String]) throws(RoadGraphError) {
        for (index, point) in points.enumerated() where !point.isValid {
            throw .invalid("node \(index) is not a valid position")
        }
        for (index, edge) in edges.enumerated() {
            guard points.indices.contains(Int(edge.from)), points.indices.contains(Int(edge.to)) else {
                throw .indexOutOfRange("edge \(index) joins nodes \(edge.from) → \(edge.to), the graph has \(points.count)")
            }
            if let name = edge.name, !names.indices.contains(Int(name)) {
                throw .indexOutOfRange("edge \(index) names street \(name), the graph has \(names.count) names")
            }
            guard edge.length.isFinite, edge.length >= 0 else { throw .invalid("edge \(index) has length \(edge.length)") }
            guard edge.speed.isFinite, edge.speed > 0 else { throw .invalid("edge \(index) has speed \(edge.speed)") }
        }
        let sorted = edges.sorted { ($0.from, $0.to) < ($1.from, $1.to) }
        var firstEdge = [Int](repeating: 0, count: points.count + 1)
        for edge in sorted { firstEdge[Int(edge.from) + 1] += 1 }
        for node in points.indices { firstEdge[node + 1] += firstEdge[node] }
        self.points = points
        self.edges = sorted
        self.names = names
        self.firstEdge = firstEdge
        durations = sorted.map(\.duration)
        maxSpeed = (sorted.map(\.speed).max() ?? 1) / 3.6
        let longitudes = points.map(\.longitude)
        let crossesAntimeridian = (longitudes.max() ?? 0) - (longitudes.min() ?? 0) > 180
        let farthest = points.map { abs($0.latitude) }.max() ?? 0
        metresPerDegreeLongitude = crossesAntimeridian ? 0 : Self.metresPerDegree * cos(farthest * .pi / 180)
    }

    private static let metresPerDegree = Earth.meanRadius * .pi / 180

    /// Metres, at most the great-circle distance between two points of the graph: a flat distance
    /// with longitude scaled as at the graph's highest latitude, where its degrees are shortest.
    /// No path on the sphere is shorter (a path's length is the integral of a norm at least this
    /// flat one), and it needs no trigonometry, which is most of a search's time.
    @inline(__always)
    func lowerBound(_ a: GeoPoint, _ b: GeoPoint) -> Double {
        let dx = (a.longitude - b.longitude) * metresPerDegreeLongitude
        let dy = (a.latitude - b.latitude) * Self.metresPerDegree
        // Edge lengths are stored to the centimetre: a hair of slack keeps the bound below them.
        return (dx * dx + dy * dy).squareRoot() * 0.999
    }

    /// Reads a graph file.
    public init(contentsOf path: String) throws(RoadGraphError) {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw .unreadable("\(path): \(error.localizedDescription)")
        }
        self = try RoadGraph(decoding: [UInt8](data))
    }

    /// The indexes into `edges` of the roads leaving `node`.
    public func edges(from node: Int) -> Range<Int> {
        firstEdge[node]..<firstEdge[node + 1]
    }

    /// The street name of an edge, if it has one.
    public func name(of edge: Edge) -> String? {
        edge.name.map { names[Int($0)] }
    }

    /// The edge from `from` to `to` that is quickest, if the road goes that way.
    func edge(from: Int, to: Int) -> Int? {
        edges(from: from).filter { edges[$0].to == to }.min { durations[$0] < durations[$1] }
    }
}
