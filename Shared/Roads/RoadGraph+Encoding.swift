import Geo

extension RoadGraph {
    /// The graph file of this graph (docs/roads.md; the format `init(decoding:)` reads), for graphs
    /// made in Swift (`ridectl city synthetic`). Positions are kept to 1e-7 degrees, lengths to the
    /// centimetre and speeds to the km/h, as the file holds them.
    public func encoded() -> [UInt8] {
        var body: [UInt8] = []
        body.reserveCapacity(points.count * 8 + edges.count * 16 + names.reduce(0) { $0 + 2 + $1.utf8.count })
        func u32(_ value: UInt32) { withUnsafeBytes(of: value.littleEndian) { body.append(contentsOf: $0) } }
        func u16(_ value: UInt16) { withUnsafeBytes(of: value.littleEndian) { body.append(contentsOf: $0) } }
        for point in points {
            u32(UInt32(bitPattern: Int32((point.latitude * 1e7).rounded())))
            u32(UInt32(bitPattern: Int32((point.longitude * 1e7).rounded())))
        }
        for edge in edges {
            u32(UInt32(edge.from))
            u32(UInt32(edge.to))
            u32(UInt32((edge.length * 100).rounded()))
            u16(edge.name.map { UInt16($0 + 1) } ?? 0)
            body.append(UInt8(min(max(edge.speed.rounded(), 1), 255)))
            body.append(0)
        }
        for name in names {
            let bytes = Array(name.utf8.prefix(Int(UInt16.max)))
            u16(UInt16(bytes.count))
            body.append(contentsOf: bytes)
        }
        var file = Self.magic
        for value in [
            Self.formatVersion, UInt32(points.count), UInt32(edges.count), UInt32(names.count), UInt32(body.count),
            CRC32.checksum(body[...]),
        ] {
            withUnsafeBytes(of: value.littleEndian) { file.append(contentsOf: $0) }
        }
        return file + body
    }
}
