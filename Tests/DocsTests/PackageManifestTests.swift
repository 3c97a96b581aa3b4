import Foundation
import TestProcess
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
        struct Setting: Decodable {
            struct Kind: Decodable {
                struct Flags: Decodable { let _0: [String] }
                let unsafeFlags: Flags?
            }
            let kind: Kind
        }
        let name: String
        let type: String
        let path: String?
        let dependencies: [Dependency]
        let settings: [Setting]?
        var unsafeFlags: [String] { (settings ?? []).flatMap { $0.kind.unsafeFlags?._0 ?? [] } }
    }
    struct Manifest: Decodable {
        struct Package: Decodable { let identity: String? }
        let targets: [Target]
        let dependencies: [[String: [Package]]]
        var packages: [String] { dependencies.flatMap(\.values).flatMap { $0 }.compactMap(\.identity) }
    }

    /// The manifest as `swift package` reads it: by default as a plain `swift build` does, with the
    /// macros a target built from swift-syntax (docs/contributing.md#the-macros), whatever `make`
    /// exported to this process.
    /// `fuzzing`: as the fuzzer's build reads it (`RIDE_FUZZ=1`).
    static func manifest(macrosLibrary: String? = nil, fuzzing: Bool = false) async throws -> Manifest {
        // A scratch path of its own: `swift test` holds the lock on .build.
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("manifest-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: scratch) }
        // env: its -u options before its assignments.
        let environment =
            (macrosLibrary == nil ? ["-u", "RIDE_WIRE_MACROS"] : []) + (fuzzing ? [] : ["-u", "RIDE_FUZZ"])
            + (macrosLibrary.map { ["RIDE_WIRE_MACROS=\($0)"] } ?? []) + (fuzzing ? ["RIDE_FUZZ=1"] : [])
        let output = try await TestProcess.output(
            "/usr/bin/env",
            environment + ["swift", "package", "--package-path", Repository.root.path, "--scratch-path", scratch.path, "dump-package"])
        return try JSONDecoder().decode(Manifest.self, from: Data(output.utf8))
    }

    static func imports(under path: String) throws -> Set<String> {
        let directory = Repository.root.appendingPathComponent(path)
        let files = (FileManager.default.enumerator(at: directory, includingPropertiesForKeys: nil)?.allObjects as? [URL] ?? []).filter {
            $0.pathExtension == "swift"
        }
        let line = try Regex(
            #"(?m)^(?:@\w+\s+)*(?:public\s+|package\s+|internal\s+)?import\s+(?:(?:struct|class|enum|func|protocol|typealias)\s+)?(\w+)"#)
        var modules: Set<String> = []
        for file in files {
            for match in try String(contentsOf: file, encoding: .utf8).matches(of: line) {
                modules.insert(String(match.output[1].substring!))
            }
        }
        return modules
    }

    @Test func everyTargetDeclaresWhatItImportsAndNothingMore() async throws {
        let manifest = try await Self.manifest()
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

    /// With the macros built as a library (`make`'s RIDE_WIRE_MACROS), nothing builds swift-syntax
    /// and every target loads the library; without it, the macros are a target of their own.
    @Test func theMacrosComeBuiltOrFromSwiftSyntax() async throws {
        let library = "/nonexistent/wire-macros/libWireMacros.so"
        let built = try await Self.manifest(macrosLibrary: library)
        #expect(!built.targets.contains { $0.type == "macro" } && !built.packages.contains("swift-syntax"), "\(built.packages)")
        #expect(built.targets.count > 30)
        for target in built.targets where target.type != "system" {
            let flags = target.unsafeFlags
            #expect(zip(flags, flags.dropFirst()).contains { $0 == ("-load-plugin-library", library) }, "\(target.name): \(flags)")
        }
        let plain = try await Self.manifest()
        #expect(plain.targets.contains { $0.name == "WireMacros" && $0.type == "macro" } && plain.packages.contains("swift-syntax"))
        #expect(plain.targets.allSatisfy { !$0.unsafeFlags.contains("-load-plugin-library") })
    }

    /// The layers point one way (docs/design.md): what each target may not reach, directly or
    /// through another target of the package.
    static let unreachable: [(from: [String], not: [String])] = [
        // The bottom: JSON, geometry, the libzmq binding and the OS shims.
        (["Wire", "Geo", "ZeroMQ"], ["Bus", "BusModel", "RideModels", "ServiceKit", "Storage", "RideContract"]),
        // The bus and the models know nothing of services, stores or the HTTP server.
        (["Bus", "RideModels", "RideContract"], ["ServiceKit", "Storage", "ServiceStorage"]),
        (["RideModels"], ["Bus"]),
        // Stores keep events and replies, and know nothing of sockets.
        (["BusModel", "Storage"], ["Bus", "ZeroMQ"]),
        // What a command line needs, without a server: the launcher, the road servers, the cities.
        (["SettingsKit", "PlatformLauncher", "RoadServers", "Cities"], ["ServiceKit", "Bus"]),
    ]

    /// The targets of the package `name` reaches, directly or through others.
    static func reached(from name: String, in manifest: Manifest) -> Set<String> {
        let local = Dictionary(manifest.targets.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        var seen: Set<String> = []
        var next = [name]
        while let current = next.popLast() {
            for dependency in local[current]?.dependencies.compactMap(\.name) ?? []
            where local[dependency] != nil && seen.insert(dependency).inserted {
                next.append(dependency)
            }
        }
        return seen
    }

    @Test func theLayersPointOneWay() async throws {
        let manifest = try await Self.manifest()
        let local = Dictionary(manifest.targets.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        func reached(from name: String) -> Set<String> { Self.reached(from: name, in: manifest) }
        for rule in Self.unreachable {
            for from in rule.from {
                #expect(local[from] != nil, "\(from) is a target")
                let wrong = reached(from: from).intersection(rule.not)
                #expect(wrong.isEmpty, "\(from) reaches \(wrong.sorted())")
            }
        }
        // No shared library reaches a service's or a tool's, no service another's, and no tool a
        // service's: ridectl uses the platform through its processes (the bus, HTTP, their output).
        let services = manifest.targets.filter { $0.path?.hasPrefix("Services/") == true && $0.type == "regular" }.map(\.name)
        let tools = manifest.targets.filter { $0.path?.hasPrefix("Tools/") == true }.map(\.name)
        #expect(services.count >= 7 && !tools.isEmpty)
        for target in manifest.targets where target.path?.hasPrefix("Shared/") == true {
            let wrong = reached(from: target.name).intersection(services + tools)
            #expect(wrong.isEmpty, "\(target.name) reaches \(wrong.sorted())")
        }
        for service in services {
            let wrong = reached(from: service).intersection(services.filter { $0 != service })
            #expect(wrong.isEmpty, "\(service) reaches \(wrong.sorted())")
        }
        for tool in tools {
            let wrong = reached(from: tool).intersection(services)
            #expect(wrong.isEmpty, "\(tool) reaches \(wrong.sorted())")
        }
    }

    /// The fuzzer's build compiles no swift-crypto (Fuzz/README.md): nothing `ride-fuzz` reaches
    /// declares it then, though ZeroMQ and BusModel do in every other build.
    @Test func theFuzzBuildLeavesSwiftCryptoOut() async throws {
        func crypto(_ manifest: Manifest) -> [String] {
            let local = Dictionary(manifest.targets.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
            return Self.reached(from: "ride-fuzz", in: manifest).sorted().filter {
                local[$0]?.dependencies.contains { $0.name == "Crypto" } == true
            }
        }
        #expect(crypto(try await Self.manifest()) == ["BusModel", "ZeroMQ"])
        #expect(crypto(try await Self.manifest(fuzzing: true)) == [])
    }

    /// README's table of processes has a row for every executable the platform runs.
    @Test func theReadmeListsEveryProcess() async throws {
        let readme = try String(contentsOf: Repository.root.appendingPathComponent("README.md"), encoding: .utf8)
        let rows = Set(
            readme.split(separator: "\n").filter { $0.hasPrefix("| `") }.compactMap {
                $0.split(separator: "`").dropFirst().first.map(String.init)
            })
        let processes = try await Self.manifest().targets.filter {
            $0.type == "executable" && ($0.name.hasPrefix("ride-") || $0.name == "ridectl") && $0.name != "ride-fuzz"
        }
        #expect(processes.count >= 8)
        for process in processes { #expect(rows.contains(process.name), "README's table of processes lacks \(process.name)") }
    }
}
