import Foundation
import Testing

/// Every relative link in README.md and docs/, and every repository path they name in backticks
/// (`Services/orders/…`, `deploy/…`), exists: a doc that points at nothing is a bug.
@Suite struct DocsPathsTests {
    /// Top-level folders whose paths the docs name; other backticked text (`.build/…`, a URL path) is not checked.
    static let folders = ["Services", "Shared", "Tools", "Tests", "Fuzz", "deploy", "docs", ".ci"]

    static func exists(_ url: URL) -> Bool { FileManager.default.fileExists(atPath: url.standardizedFileURL.path) }

    @Test func everyRelativeLinkExists() throws {
        let link = try Regex(#"\]\(([^)\s]+)\)"#)
        var checked = 0
        for document in Repository.documents() {
            let text = try String(contentsOf: document, encoding: .utf8)
            for match in text.matches(of: link) {
                let target = String(match.output[1].substring!)
                if target.hasPrefix("http:") || target.hasPrefix("https:") || target.hasPrefix("mailto:") || target.hasPrefix("#") {
                    continue
                }
                let path = String(target.split(separator: "#", maxSplits: 1).first ?? "")
                checked += 1
                #expect(
                    Self.exists(document.deletingLastPathComponent().appendingPathComponent(path)),
                    "\(document.lastPathComponent): the link \(target) leads nowhere")
            }
        }
        #expect(checked > 10, "the README links to the docs")
    }

    @Test func everyRepositoryPathNamedExists() throws {
        let code = try Regex(#"`([^`\n]+)`"#)
        var checked = 0
        for document in Repository.documents() {
            let text = try String(contentsOf: document, encoding: .utf8)
            for match in text.matches(of: code) {
                let token = String(match.output[1].substring!)
                guard let first = token.split(separator: "/").first, Self.folders.contains(String(first)),
                    !token.contains(where: { " <>*{}$:…|()".contains($0) }), !token.contains("...")
                else { continue }
                checked += 1
                #expect(
                    Self.exists(Repository.root.appendingPathComponent(token)),
                    "\(document.lastPathComponent) names \(token), which does not exist")
            }
        }
        #expect(checked > 10, "the docs name the repository's paths")
    }

    /// The code's comments cite the project's own docs (`docs/…md`), which exist, and never the
    /// seed documents (`reference/…`), which are not in the repository.
    @Test func everyDocTheCodeCitesExists() throws {
        let cited = try Regex(#"(?:^|[\s(`])((?:docs|reference)/[A-Za-z0-9_./-]+\.md)"#)
        var checked = 0
        for folder in ["Shared", "Services", "Tools", "Tests", "Fuzz"] {
            let files =
                FileManager.default.enumerator(at: Repository.root.appendingPathComponent(folder), includingPropertiesForKeys: nil)?
                .allObjects as? [URL] ?? []
            for file in files where file.pathExtension == "swift" {
                let text = try String(contentsOf: file, encoding: .utf8)
                for match in text.matches(of: cited) {
                    let path = String(match.output[1].substring!)
                    checked += 1
                    #expect(
                        !path.hasPrefix("reference/"),
                        "\(file.lastPathComponent) cites \(path), a seed document outside the repository: cite the docs")
                    let found = path.hasPrefix("reference/") || Self.exists(Repository.root.appendingPathComponent(path))
                    #expect(found, "\(file.lastPathComponent) cites \(path), which does not exist")
                }
            }
        }
        #expect(checked > 10, "the code cites the docs")
    }
}
