import ArgumentParser
import Foundation
import RideContract

/// `ridectl contract`: the contract's tables of ops and events, as the docs carry them.
struct ContractCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "contract",
        abstract: "Print the tables of ops and events the contract declares (Shared/RideContract), or write them into the docs.",
        discussion: """
            The docs carry these tables between markers (docs/services/<service>.md: <!-- ops: <service> -->, \
            docs/design.md: <!-- events -->); a test fails when they differ from the contract. After \
            changing an op or an event, run `ridectl contract --write .` from the repository.
            """)

    @Option(help: "Write the tables into the docs of the repository at this path instead of printing them.")
    var write: String?

    func run() throws {
        guard let root = write else {
            for (path, tables) in ContractTables.pages {
                for table in tables { print("\(path) \(table.open)\n\(table.table)\n") }
            }
            return
        }
        for (path, tables) in ContractTables.pages {
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
