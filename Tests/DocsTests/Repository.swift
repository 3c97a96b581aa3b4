import Foundation

enum Repository {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// README.md and every Markdown file under docs/.
    static func documents() -> [URL] {
        let docs = root.appendingPathComponent("docs")
        let files = (FileManager.default.enumerator(at: docs, includingPropertiesForKeys: nil)?.allObjects as? [URL] ?? []).filter {
            $0.pathExtension == "md"
        }
        return [root.appendingPathComponent("README.md")] + files.sorted { $0.path < $1.path }
    }
}
