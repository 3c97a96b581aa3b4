import ArgumentParser
import Foundation
import PlatformLauncher
import RideContract
import SettingsKit
import Wire

/// `ridectl contract`: the contract's tables of ops and events and the gateway's table of routes,
/// as the docs carry them, or the gateway's OpenAPI document.
struct ContractCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "contract",
        abstract: "Print the tables of ops, events and HTTP routes the platform declares, or write them into the docs.",
        discussion: """
            The docs carry these tables between markers (docs/services/<service>.md: <!-- ops: <service> -->, \
            docs/design.md: <!-- events -->, docs/services/gateway.md: <!-- routes --> and <!-- live -->); a test fails \
            when they differ from the code. After changing an op, an event, a route or a live message, run \
            `ridectl contract --write .` from the repository. --openapi prints the gateway's /openapi.json.
            """)

    @Option(help: "Write the tables into the docs of the repository at this path instead of printing them.")
    var write: String?

    @Flag(help: "Print the gateway's OpenAPI document (what it serves at /openapi.json) instead.")
    var openapi = false

    @OptionGroup var bin: BinDirectoryOption

    func run() async throws {
        if openapi {
            print(try gateway(printing: .openapi), terminator: "")
            return
        }
        let pages = DocsTables.pages(
            gatewayRoutes: try gateway(printing: .routes).trimmingCharacters(in: .newlines),
            liveMessages: try gateway(printing: .live).trimmingCharacters(in: .newlines))
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

    /// What `ride-gateway --print` says: the gateway's API comes from its routes, which only the
    /// gateway holds (ridectl links no service's library).
    enum GatewayDocument: String { case openapi, routes, live }

    func gateway(printing document: GatewayDocument) throws -> String {
        let executable = "\(bin.path)/ride-gateway"
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = ["--print", document.rawValue]
        let output = Pipe()
        process.standardOutput = output
        do {
            try process.run()
        } catch {
            throw ValidationError("cannot run \(executable) (build it, or pass --bin-dir): \(error)")
        }
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw ValidationError("\(executable) --print \(document.rawValue) exited \(process.terminationStatus)")
        }
        return text
    }
}

/// Every table the docs carry between markers: the contract's (ops, events, roles) and the
/// gateway's routes and live messages (`ride-gateway --print routes`, `--print live`).
public enum DocsTables {
    public static func pages(gatewayRoutes: String, liveMessages: String) -> [(
        path: String, tables: [(open: String, close: String, table: String)]
    )] {
        ContractTables.pages + [
            (
                "docs/services/gateway.md",
                [("<!-- routes -->", "<!-- /routes -->", gatewayRoutes), ("<!-- live -->", "<!-- /live -->", liveMessages)]
            )
        ]
    }
}
