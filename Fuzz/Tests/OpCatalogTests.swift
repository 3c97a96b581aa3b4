import Bus
import Foundation
@testable import ProtocolFuzzing
import Testing

/// The fuzzer's list of ops (`OpParams.all`) against what the services register: an op added to a
/// router and not to the list would never be fuzzed, so it fails here instead.
@Suite struct OpCatalogTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// `service.op` → the params type of every `router.on(…)` in Services/ (the service is the
    /// folder under Services/). Only files that use `OpRouter` are read: Hummingbird's HTTP
    /// routes in the gateway are also `router.on(…)`.
    static func registrations() throws -> [String: String] {
        let registration = try Regex(#"\.on\("([^"]+)"(?:,\s*params:\s*(\w+)\.self)?\)\s*\{\s*(?:\(\s*\w+\s*:\s*(\w+)\s*,\s*\w+\s*\))?"#)
        let aliases = try typealiases()
        var found: [String: String] = [:]
        for file in try swiftFiles(under: "Services") {
            let text = try String(contentsOf: file, encoding: .utf8)
            guard text.contains("OpRouter") else { continue }
            let service = file.pathComponents[file.pathComponents.firstIndex(of: "Services")! + 1]
            let matches = text.matches(of: registration)
            // Every `.on(` must be one the pattern reads; a new way to register fails loudly.
            #expect(matches.count == text.matches(of: try Regex(#"\.on\("#)).count, "\(file.lastPathComponent): an op registration this test cannot read")
            for match in matches {
                let op = String(match.output[1].substring!)
                let type = (match.output[2].substring ?? match.output[3].substring).map(String.init) ?? "NoParams"
                found["\(service).\(op)"] = aliases[type] ?? type
            }
        }
        return found
    }

    /// The `typealias`es of Shared/ (`EstimateParams` is `CreateOrderParams`).
    static func typealiases() throws -> [String: String] {
        let alias = try Regex(#"typealias\s+(\w+)\s*=\s*(\w+)"#)
        let pairs = try swiftFiles(under: "Shared").flatMap { file in
            try String(contentsOf: file, encoding: .utf8).matches(of: alias).map { (String($0.output[1].substring!), String($0.output[2].substring!)) }
        }
        return Dictionary(pairs, uniquingKeysWith: { first, _ in first })
    }

    static func swiftFiles(under folder: String) throws -> [URL] {
        let enumerator = FileManager.default.enumerator(at: root.appendingPathComponent(folder), includingPropertiesForKeys: nil)
        return (enumerator?.allObjects as? [URL] ?? []).filter { $0.pathExtension == "swift" }
    }

    @Test func theListHasEveryRegisteredOpWithItsParamsType() throws {
        let registered = try Self.registrations()
        #expect(registered.count >= 40, "found only \(registered.count) registrations: is the pattern still right?")
        let listed = Dictionary(OpParams.all.map { ($0.name, $0.typeName) }, uniquingKeysWith: { first, _ in first })
        #expect(listed.count == OpParams.all.count, "an op is listed twice")
        for (op, type) in registered.sorted(by: { $0.key < $1.key }) {
            #expect(listed[op] == type, "\(op) takes \(type); OpParams.all has \(listed[op] ?? "nothing") (Fuzz/ProtocolFuzzing/OpParamsCatalog.swift)")
        }
        for op in listed.keys.sorted() where registered[op] == nil {
            Issue.record("OpParams.all lists \(op), which no service registers")
        }
    }
}
