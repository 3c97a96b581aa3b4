import ArgumentParser
import Foundation
import GatewayService
import RideContract
import Wire

/// `ridectl contract`: the contract's tables of ops and events and the gateway's table of routes,
/// as the docs carry them, or the gateway's OpenAPI document.
struct ContractCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "contract",
        abstract: "Print the tables of ops, events and HTTP routes the platform declares, or write them into the docs.",
        discussion: """
            The docs carry these tables between markers (docs/services/<service>.md: <!-- ops: <service> -->, \
            docs/design.md: <!-- events -->, docs/services/gateway.md: <!-- routes -->); a test fails when \
            they differ from the code. After changing an op, an event or a route, run \
            `ridectl contract --write .` from the repository. --openapi prints the gateway's /openapi.json.
            """)

    @Option(help: "Write the tables into the docs of the repository at this path instead of printing them.")
    var write: String?

    @Flag(help: "Print the gateway's OpenAPI document (what it serves at /openapi.json) instead.")
    var openapi = false

    func run() async throws {
        if openapi {
            print(String(decoding: try JSONCoding.encode(try await GatewayAPI.document()), as: UTF8.self))
            return
        }
        let pages = try await DocsTables.pages()
        guard let root = write else {
            for (path, tables) in pages {
                for table in tables { print("\(path) \(table.open)\n\(table.table)\n") }
            }
            return
        }
        for (path, tables) in pages {
            let file = URL(fileURLWithPath: root).appendingPathComponent(path)
            guard let text = try? String(contentsOf: file, encoding: .utf8) else { throw ValidationError("cannot read \(file.path)") }
            guard let updated = ContractTables.updating(text, tables: tables) else {
                throw ValidationError("\(file.path) lacks a marker: \(tables.map { "\($0.open) … \($0.close)" }.joined(separator: ", "))")
            }
            if updated != text {
                try updated.write(to: file, atomically: true, encoding: .utf8)
                print("updated \(path)")
            }
        }
    }
}

/// Every table the docs carry between markers: the contract's (ops, events) and the gateway's routes.
public enum DocsTables {
    public static func pages() async throws -> [(path: String, tables: [(open: String, close: String, table: String)])] {
        ContractTables.pages + [("docs/services/gateway.md", [("<!-- routes -->", "<!-- /routes -->", try await GatewayAPI.routeTable())])]
    }
}
