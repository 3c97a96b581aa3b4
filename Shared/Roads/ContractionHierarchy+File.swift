import Foundation

/// The hierarchy file (docs/cities.md), so a metropolitan city's services start without contracting
/// its graph again: a 44-byte header — `RIDEHIER`, then little-endian UInt32s: version, node count,
/// the graph's edge count, the CRC-32 of the graph file's body (the graph it belongs to), shortcut
/// count, up arc count, down arc count, body length, CRC-32 of the body — and the body: shortcut
/// halves (Int32 first, second), up offsets (Int32 × nodes + 1), up arcs (Int32 node, Float64
/// seconds, Int32 id), down offsets, down arcs. Every value is checked before it is used: a damaged
/// or foreign file throws, naming the problem, and never makes a search loop or read out of bounds.
extension ContractionHierarchy {
    static let magic = Array("RIDEHIER".utf8)
    static let formatVersion: UInt32 = 1
    static let headerSize = 44

    /// The file of this hierarchy, for the graph whose file body has CRC-32 `graphChecksum`.
    public func encoded(graphChecksum: UInt32) -> [UInt8] {
        var body: [UInt8] = []
        body.reserveCapacity(firstHalf.count * 8 + (upFirst.count + downFirst.count) * 4 + (upArcs.count + downArcs.count) * 16)
        func append<T: FixedWidthInteger>(_ value: T) { withUnsafeBytes(of: value.littleEndian) { body.append(contentsOf: $0) } }
        for (first, second) in zip(firstHalf, secondHalf) {
            append(first)
            append(second)
        }
        for (offsets, arcs) in [(upFirst, upArcs), (downFirst, downArcs)] {
            for offset in offsets { append(offset) }
            for arc in arcs {
                append(arc.node)
                append(arc.seconds.bitPattern)
                append(arc.id)
            }
        }
        var file = Self.magic
        let header: [UInt32] = [
            Self.formatVersion, UInt32(upFirst.count - 1), UInt32(originalEdges), graphChecksum, UInt32(firstHalf.count),
            UInt32(upArcs.count), UInt32(downArcs.count),
            UInt32(body.count), CRC32.checksum(body[...]),
        ]
        for value in header { withUnsafeBytes(of: value.littleEndian) { file.append(contentsOf: $0) } }
        return file + body
    }

    /// Reads a hierarchy file made for `graph`, whose file body had CRC-32 `graphChecksum`.
    public init(decoding bytes: [UInt8], for graph: RoadGraph, graphChecksum: UInt32) throws(RoadGraphError) {
        guard bytes.count >= Self.headerSize else {
            throw .truncated("\(bytes.count) bytes, the hierarchy's header alone is \(Self.headerSize)")
        }
        guard Array(bytes[0..<8]) == Self.magic else { throw .badMagic }
        func u32(_ offset: Int) -> UInt32 { bytes[offset..<offset + 4].reversed().reduce(0) { $0 << 8 | UInt32($1) } }
        guard u32(8) == Self.formatVersion else { throw .unsupportedVersion(u32(8)) }
        let (nodes, edges, belongsTo) = (Int(u32(12)), Int(u32(16)), u32(20))
        let (shortcuts, ups, downs, length, checksum) = (Int(u32(24)), Int(u32(28)), Int(u32(32)), Int(u32(36)), u32(40))
        guard nodes == graph.points.count, edges == graph.edges.count, belongsTo == graphChecksum else {
            throw .invalid("the hierarchy was made for another graph (\(nodes) nodes, \(edges) edges); make the bundle again")
        }
        guard bytes.count - Self.headerSize == length else {
            throw .truncated("the body should be \(length) bytes, the file has \(bytes.count - Self.headerSize)")
        }
        guard shortcuts * 8 + (nodes + 1) * 8 + (ups + downs) * 16 == length else {
            throw .invalid("\(shortcuts) shortcuts, \(ups) up and \(downs) down arcs do not make \(length) bytes")
        }
        let actual = CRC32.checksum(bytes[Self.headerSize...])
        guard actual == checksum else { throw .checksumMismatch(expected: checksum, actual: actual) }
        let values = try Self.read(bytes, nodes: nodes, edges: edges, shortcuts: shortcuts, ups: ups, downs: downs)
        try Self.checkAgainst(
            graph, first: values.first, second: values.second, upFirst: values.upFirst, up: values.up, downFirst: values.downFirst,
            down: values.down)
        self.init(
            originalEdges: edges, firstHalf: values.first, secondHalf: values.second, upFirst: values.upFirst, upArcs: values.up,
            downFirst: values.downFirst, downArcs: values.down
        )
    }

    /// Each shortcut joins its halves end to start and stands for at most as many edges as the
    /// graph has nodes (a quickest path visits a node once: unpacking stays small); each arc runs
    /// between the nodes, and takes the seconds, of the edge its id names.
    private static func checkAgainst(
        _ graph: RoadGraph, first: [Int32], second: [Int32], upFirst: [Int32], up: [Arc], downFirst: [Int32], down: [Arc]
    ) throws(RoadGraphError) {
        var (from, to, seconds, length) = ([Int32](), [Int32](), [Double](), [Int]())
        for edge in graph.edges.indices {
            from.append(graph.edges[edge].from)
            to.append(graph.edges[edge].to)
            seconds.append(graph.durations[edge])
            length.append(1)
        }
        for index in first.indices {
            let (a, b) = (Int(first[index]), Int(second[index]))
            guard to[a] == from[b] else { throw .invalid("shortcut \(index): its halves do not meet (\(to[a]) then \(from[b]))") }
            guard length[a] + length[b] <= graph.points.count else {
                throw .invalid("shortcut \(index) stands for more edges than the graph has nodes")
            }
            from.append(from[a])
            to.append(to[b])
            seconds.append(seconds[a] + seconds[b])
            length.append(length[a] + length[b])
        }
        func check(_ offsets: [Int32], _ arcs: [Arc], _ side: String, upwards: Bool) throws(RoadGraphError) {
            for node in 0..<(offsets.count - 1) {
                for index in Int(offsets[node])..<Int(offsets[node + 1]) {
                    let arc = arcs[index]
                    let id = Int(arc.id)
                    let (start, end) = upwards ? (Int32(node), arc.node) : (arc.node, Int32(node))
                    guard from[id] == start, to[id] == end, abs(seconds[id] - arc.seconds) <= 1e-9 * max(1, seconds[id]) else {
                        throw .invalid(
                            "\(side) arc \(index) says \(start) → \(end) in \(arc.seconds) s, its edge \(id) is \(from[id]) → \(to[id]) in \(seconds[id]) s"
                        )
                    }
                }
            }
        }
        try check(upFirst, up, "up", upwards: true)
        try check(downFirst, down, "down", upwards: false)
    }

    private static func read(_ bytes: [UInt8], nodes: Int, edges: Int, shortcuts: Int, ups: Int, downs: Int) throws(RoadGraphError) -> (
        first: [Int32], second: [Int32], upFirst: [Int32], up: [Arc], downFirst: [Int32], down: [Arc]
    ) {
        var offset = headerSize
        func int32() -> Int32 {
            defer { offset += 4 }
            return Int32(bitPattern: bytes[offset..<offset + 4].reversed().reduce(0) { $0 << 8 | UInt32($1) })
        }
        func float64() -> Double {
            defer { offset += 8 }
            return Double(bitPattern: bytes[offset..<offset + 8].reversed().reduce(0) { $0 << 8 | UInt64($1) })
        }
        var (first, second) = ([Int32](), [Int32]())
        first.reserveCapacity(shortcuts)
        second.reserveCapacity(shortcuts)
        for index in 0..<shortcuts {
            let (a, b) = (int32(), int32())
            // A shortcut is made of edges that existed before it: unpacking always ends.
            guard a >= 0, b >= 0, Int(a) < edges + index, Int(b) < edges + index else {
                throw .indexOutOfRange("shortcut \(index) is made of \(a) and \(b)")
            }
            first.append(a)
            second.append(b)
        }
        func arcs(_ count: Int, _ side: String) throws(RoadGraphError) -> ([Int32], [Arc]) {
            var offsets: [Int32] = []
            offsets.reserveCapacity(nodes + 1)
            for node in 0...nodes {
                let value = int32()
                guard value >= (offsets.last ?? 0), Int(value) <= count, node > 0 || value == 0 else {
                    throw .invalid("\(side) offset \(node) is \(value)")
                }
                offsets.append(value)
            }
            guard Int(offsets[nodes]) == count else { throw .invalid("\(side) offsets end at \(offsets[nodes]), there are \(count) arcs") }
            var list: [Arc] = []
            list.reserveCapacity(count)
            for index in 0..<count {
                let arc = Arc(node: int32(), seconds: float64(), id: int32())
                guard arc.node >= 0, Int(arc.node) < nodes, arc.id >= 0, Int(arc.id) < edges + shortcuts, arc.seconds.isFinite,
                    arc.seconds >= 0
                else {
                    throw .invalid("\(side) arc \(index) (node \(arc.node), edge \(arc.id), \(arc.seconds) s)")
                }
                list.append(arc)
            }
            return (offsets, list)
        }
        let (upFirst, up) = try arcs(ups, "up")
        let (downFirst, down) = try arcs(downs, "down")
        return (first, second, upFirst, up, downFirst, down)
    }
}
