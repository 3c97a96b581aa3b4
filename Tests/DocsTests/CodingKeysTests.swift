import Foundation
import Testing

/// Each wire key is spelled once: `@WireModel` and `@WireKeys` derive `CodingKeys` (each name in
/// snake_case, or its `@WireKey`). A struct that still declares them says why, in a doc comment on
/// the enum (keys kept as stored rows have them, a member that is never on the wire).
@Suite struct CodingKeysTests {
    @Test func everyDeclaredCodingKeysSaysWhy() throws {
        var unexplained: [String] = []
        var declared = 0
        for folder in ["Shared", "Services", "Tools"] {
            let base = Repository.root.appendingPathComponent(folder)
            let files = (FileManager.default.enumerator(at: base, includingPropertiesForKeys: nil)?.allObjects as? [URL] ?? []).filter {
                $0.pathExtension == "swift"
            }
            for file in files {
                let lines = try String(contentsOf: file, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
                for (index, line) in lines.enumerated() where line.trimmingCharacters(in: .whitespaces).hasPrefix("enum CodingKeys") {
                    declared += 1
                    let previous = index > 0 ? lines[index - 1].trimmingCharacters(in: .whitespaces) : ""
                    if !previous.hasPrefix("///") {
                        unexplained.append("\(file.path.dropFirst(Repository.root.path.count + 1)):\(index + 1)")
                    }
                }
            }
        }
        #expect(declared > 0, "the scan finds the declarations it checks")
        #expect(unexplained.isEmpty, "CodingKeys without a reason (derive them: @WireModel, or @WireKeys and @WireKey): \(unexplained)")
    }
}
