import Foundation
import Testing

/// docs/security.md names a test for each threat it says is stopped: each name must be a test (or
/// a suite) that exists, so the threat model cannot claim a defence whose test was renamed or removed.
struct ThreatModelTests {
    /// The names in the last column of the threats' table: `testName` in backticks, or a bare `SuiteName`.
    static func namedTests() throws -> [String] {
        let text = try String(contentsOf: Repository.root.appendingPathComponent("docs/security.md"), encoding: .utf8)
        // The threats' table only: from its header to the first line that is not a row.
        let rows = text.split(separator: "\n", omittingEmptySubsequences: false).drop { !$0.hasPrefix("| threat") }.dropFirst(2)
            .prefix { $0.hasPrefix("| ") }
        return rows.compactMap { $0.split(separator: "|").last }
            .flatMap { $0.split(separator: ",") }
            .map { $0.trimmingCharacters(in: .whitespaces).trimmingCharacters(in: CharacterSet(charactersIn: "`")) }
            .filter { !$0.isEmpty && $0 != "—" && $0.allSatisfy { $0.isLetter || $0.isNumber } }
    }

    /// Every Swift source under Tests/, as one text.
    static func testSources() throws -> String {
        let tests = Repository.root.appendingPathComponent("Tests")
        let files = (FileManager.default.enumerator(at: tests, includingPropertiesForKeys: nil)?.allObjects as? [URL] ?? []).filter {
            $0.pathExtension == "swift"
        }
        return try files.map { try String(contentsOf: $0, encoding: .utf8) }.joined(separator: "\n")
    }

    @Test func everyTestTheThreatModelNamesExists() throws {
        let names = try Self.namedTests()
        #expect(names.count >= 10, "the table's test column was read: \(names)")
        let sources = try Self.testSources()
        for name in names {
            #expect(
                sources.contains("func \(name)(") || sources.contains("struct \(name)"), "docs/security.md names \(name), which is no test")
        }
    }
}
