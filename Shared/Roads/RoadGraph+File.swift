import Foundation
import Geo

/// The graph file (docs/roads.md): a 32-byte header — `RIDEROAD`, then little-endian UInt32s:
/// version, node count, edge count, name count, body length, CRC-32 of the body — and the body:
/// nodes (Int32 latitude, longitude in 1e-7 degrees), edges (UInt32 from, to, length in cm;
/// UInt16 name, 0 for none, else index + 1; UInt8 km/h; UInt8 reserved), names (UInt16 length,
/// UTF-8). Every read is bounds-checked: a damaged file throws, it never traps.
extension RoadGraph {
    static let magic = Array("RIDEROAD".utf8)
    static let headerSize = 32

    /// The graph built into the `Roads` module: central Helsinki (Data/ATTRIBUTION.md).
    /// Read once per process; later calls return the same graph.
    public static func helsinki() throws(RoadGraphError) -> RoadGraph {
        try builtIn.get()
    }

    private static let builtIn: Result<RoadGraph, RoadGraphError> = Result { () throws(RoadGraphError) in
        guard let path = builtInPath() else {
            throw .unreadable(
                "Data/helsinki.roads is not installed (the Ridesharing_Roads.resources bundle belongs next to the executable)")
        }
        return try RoadGraph(contentsOf: path)
    }

    /// Looks next to the executable first (an installed copy, the Docker image) and only then asks
    /// `Bundle.module`, whose accessor stops the process when it finds no bundle at all.
    static func builtInPath() -> String? {
        let installed = Bundle.main.bundleURL.appendingPathComponent("Ridesharing_Roads.resources/Data/helsinki.roads").path
        if FileManager.default.isReadableFile(atPath: installed) { return installed }
        return Bundle.module.url(forResource: "helsinki", withExtension: "roads", subdirectory: "Data")?.path
    }

    /// The CRC-32 a graph file's header gives its body (what a hierarchy file names its graph by);
    /// nil for a file too short to have a header.
    public static func checksum(ofFile bytes: [UInt8]) -> UInt32? {
        guard bytes.count >= headerSize else { return nil }
        return bytes[28..<32].reversed().reduce(0) { $0 << 8 | UInt32($1) }
    }

    /// Decodes a whole graph file.
    public init(decoding bytes: [UInt8]) throws(RoadGraphError) {
        var header = ByteReader(bytes[...])
        guard bytes.count >= Self.headerSize else { throw .truncated("\(bytes.count) bytes, the header alone is \(Self.headerSize)") }
        guard Array(try header.take(8, "magic")) == Self.magic else { throw .badMagic }
        let version = try header.u32("version")
        guard version == Self.formatVersion else { throw .unsupportedVersion(version) }
        let (nodeCount, edgeCount, nameCount) = (
            Int(try header.u32("node count")), Int(try header.u32("edge count")), Int(try header.u32("name count"))
        )
        let bodyLength = Int(try header.u32("body length"))
        let expected = try header.u32("checksum")
        let available = bytes.count - Self.headerSize
        guard available >= bodyLength else { throw .truncated("the body should be \(bodyLength) bytes, the file has \(available)") }
        guard available == bodyLength else { throw .invalid("\(available - bodyLength) bytes after the body") }
        let body = bytes[Self.headerSize...]
        let actual = CRC32.checksum(body)
        guard actual == expected else { throw .checksumMismatch(expected: expected, actual: actual) }
        // Counts are checked against the length before anything is allocated for them.
        guard nodeCount * 8 + edgeCount * 16 + nameCount * 2 <= bodyLength else {
            throw .truncated("\(nodeCount) nodes, \(edgeCount) edges and \(nameCount) names do not fit in \(bodyLength) bytes")
        }
        var reader = ByteReader(body)
        var points: [GeoPoint] = []
        points.reserveCapacity(nodeCount)
        for node in 0..<nodeCount {
            let latitude = Int32(bitPattern: try reader.u32("node \(node)"))
            let longitude = Int32(bitPattern: try reader.u32("node \(node)"))
            points.append(GeoPoint(latitude: Double(latitude) / 1e7, longitude: Double(longitude) / 1e7))
        }
        var edges: [Edge] = []
        edges.reserveCapacity(edgeCount)
        for edge in 0..<edgeCount {
            let (from, to) = (try reader.u32("edge \(edge)"), try reader.u32("edge \(edge)"))
            let centimetres = try reader.u32("edge \(edge)")
            let name = try reader.u16("edge \(edge)")
            let speed = try reader.take(2, "edge \(edge)").first ?? 0
            guard from < nodeCount, to < nodeCount else {
                throw .indexOutOfRange("edge \(edge) joins nodes \(from) → \(to), the file has \(nodeCount)")
            }
            guard Int(name) <= nameCount else {
                throw .indexOutOfRange("edge \(edge) names street \(name), the file has \(nameCount) names")
            }
            edges.append(
                Edge(
                    from: Int32(from), to: Int32(to), length: Double(centimetres) / 100, speed: Double(speed),
                    name: name == 0 ? nil : Int32(name) - 1))
        }
        var names: [String] = []
        for index in 0..<nameCount {
            let length = Int(try reader.u16("name \(index)"))
            guard let name = String(validating: try reader.take(length, "name \(index)"), as: UTF8.self) else {
                throw .invalid("name \(index) is not UTF-8")
            }
            names.append(name)
        }
        guard reader.isAtEnd else { throw .invalid("bytes after the last name") }
        try self.init(points: points, edges: edges, names: names)
    }
}

/// Little-endian reads that throw, naming the part, instead of running off the end.
private struct ByteReader {
    private var bytes: ArraySlice<UInt8>

    init(_ bytes: ArraySlice<UInt8>) { self.bytes = bytes }

    var isAtEnd: Bool { bytes.isEmpty }

    mutating func take(_ count: Int, _ part: String) throws(RoadGraphError) -> ArraySlice<UInt8> {
        guard count <= bytes.count else { throw .truncated("\(part) needs \(count) bytes, \(bytes.count) left") }
        defer { bytes = bytes.dropFirst(count) }
        return bytes.prefix(count)
    }

    mutating func u32(_ part: String) throws(RoadGraphError) -> UInt32 {
        try take(4, part).reversed().reduce(0) { $0 << 8 | UInt32($1) }
    }

    mutating func u16(_ part: String) throws(RoadGraphError) -> UInt16 {
        try take(2, part).reversed().reduce(0) { $0 << 8 | UInt16($1) }
    }
}
