import Foundation
import Testing

/// Package.swift declares what each target imports and nothing more: a module imported without
/// being declared builds only by luck (another target pulled it in), and a declared dependency
/// nobody imports makes the layers look other than they are.
@Suite struct PackageManifestTests {
    /// Modules of the toolchain, which no target declares.
    static let toolchain: Set<String> = [
        "Foundation", "FoundationEssentials", "FoundationNetworking", "FoundationXML", "Dispatch", "Synchronization", "Glibc", "Musl",
        "Darwin", "Testing", "XCTest", "_Concurrency", "CompilerPluginSupport", "PackageDescription",
    ]
    /// Products whose package exports more than one module under them.
    static let productModules: [String: Set<String>] = ["Metrics": ["Metrics", "CoreMetrics"]]

    struct Target: Decodable {
        struct Dependency: Decodable {
            let byName: [String?]?
            let product: [String?]?
            let target: [String?]?
            var name: String? { (byName ?? product ?? target)?.first ?? nil }
        }
        let name: String
        let type: String
        let path: String?
        let dependencies: [Dependency]
    }
    struct Manifest: Decodable { let targets: [Target] }

    static func manifest() throws -> Manifest {
        // A scratch path of its own: `swift test` holds the lock on .build.
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("manifest-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: scratch) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["swift", "package", "--package-path", Repository.root.path, "--scratch-path", scratch.path, "dump-package"]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return try JSONDecoder().decode(Manifest.self, from: data)
    }

    static func imports(under path: String) throws -> Set<String> {
        let directory = Repository.root.appendingPathComponent(path)
        let files = (FileManager.default.enumerator(at: directory, includingPropertiesForKeys: nil)?.allObjects as? [URL] ?? []).filter {
            $0.pathExtension == "swift"
        }
        let line = try Regex(#"(?m)^(?:@\w+\s+)*(?:public\s+|package\s+|internal\s+)?import\s+(?:(?:struct|class|enum|func|protocol|typealias)\s+)?(\w+)"#)
        var modules: Set<String> = []
        for file in files {
            for match in try String(contentsOf: file, encoding: .utf8).matches(of: line) { modules.insert(String(match.output[1].substring!)) }
        }
        return modules
    }

    @Test func everyTargetDeclaresWhatItImportsAndNothingMore() throws {
        let manifest = try Self.manifest()
        let macros = Set(manifest.targets.filter { $0.type == "macro" }.map(\.name))
        #expect(manifest.targets.count > 30, "the manifest was read")
        for target in manifest.targets where target.type != "system" {
            let path = try #require(target.path, "\(target.name) names its path")
            let declared = target.dependencies.compactMap(\.name)
            let provided = Set(declared.flatMap { Self.productModules[$0] ?? [$0] })
            let imported = try Self.imports(under: path).subtracting(Self.toolchain)
            let undeclared = imported.subtracting(provided)
            // A macro target is used through its macros, never imported.
            let unused = declared.filter { !macros.contains($0) && imported.isDisjoint(with: Self.productModules[$0] ?? [$0]) }
            #expect(undeclared.isEmpty, "\(target.name) imports \(undeclared.sorted()) without declaring them in Package.swift")
            #expect(unused.isEmpty, "\(target.name) declares \(unused.sorted()) in Package.swift but imports none of it")
        }
    }

    /// README's table of processes has a row for every executable the platform runs.
    @Test func theReadmeListsEveryProcess() throws {
        let readme = try String(contentsOf: Repository.root.appendingPathComponent("README.md"), encoding: .utf8)
        let rows = Set(readme.split(separator: "\n").filter { $0.hasPrefix("| `") }.compactMap { $0.split(separator: "`").dropFirst().first.map(String.init) })
        let processes = try Self.manifest().targets.filter { $0.type == "executable" && ($0.name.hasPrefix("ride-") || $0.name == "ridectl") && $0.name != "ride-fuzz" }
        #expect(processes.count >= 8)
        for process in processes { #expect(rows.contains(process.name), "README's table of processes lacks \(process.name)") }
    }
}
