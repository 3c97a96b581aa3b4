import Foundation
import TestProcess
import Testing

/// The committed file is what the script makes from the pinned extract, byte for byte.
struct PlaceDataTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/osmium"), "osmium-tool is not installed (make test-deps)"))
    func theScriptRebuildsTheCommittedFile() async throws {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("places-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let rebuilt = scratch.appendingPathComponent("helsinki.places")
        let script = "extract=$(Tools/roads/fetch-extract.sh) && python3 Tools/roads/build-places.py \"$extract\" \"$1\""
        let built = try await TestProcess.run("/bin/bash", ["-c", script, "build-places", rebuilt.path], in: Self.root)
        #expect(built.status == 0, "\(built.stderr)")
        let committed = try Data(contentsOf: Self.root.appendingPathComponent("Shared/Places/Data/helsinki.places"))
        let made = try Data(contentsOf: rebuilt)
        #expect(
            made == committed, "Shared/Places/Data/helsinki.places differs from what Tools/roads/build-places.py makes: run make places")
    }
}
