import Foundation
import RideContract
import Testing

/// The docs' tables of ops and events against the contract they describe.
@Suite struct ContractDocsTests {
    @Test func theDocsTablesAreTheContracts() throws {
        for (path, tables) in ContractTables.pages {
            let text = try String(contentsOf: Repository.root.appendingPathComponent(path), encoding: .utf8)
            let updated = try #require(ContractTables.updating(text, tables: tables), "\(path) lacks a table's markers")
            #expect(updated == text, "\(path) differs from the contract: run `ridectl contract --write .`")
        }
    }
}
