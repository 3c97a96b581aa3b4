import Foundation
import GatewayService
import RideContract
import RideCtlKit
import Testing

/// The docs' tables of ops, events and routes against the code that declares them.
@Suite struct ContractDocsTests {
    @Test func theDocsTablesAreTheContracts() async throws {
        for (path, tables) in DocsTables.pages(gatewayRoutes: try await GatewayAPI.routeTable(), liveMessages: GatewayAPI.liveMessageTable)
        {
            let text = try String(contentsOf: Repository.root.appendingPathComponent(path), encoding: .utf8)
            let updated = try #require(ContractTables.updating(text, tables: tables), "\(path) lacks a table's markers")
            #expect(updated == text, "\(path) differs from the code: run `ridectl contract --write .`")
        }
    }
}
