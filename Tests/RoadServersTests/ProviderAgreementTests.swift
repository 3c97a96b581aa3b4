import Logging
import PostgresNIO
import RoadServers
import Roads
import Testing

/// Providers over the same roads agree on the fixed Helsinki trips (`HelsinkiPairs`) within 5%.
/// Today pgRouting against itself through its other initialiser (a pool the caller runs); the
/// embedded provider joins here as `(pgRouting, embedded)` once it builds from the same extract.
@Suite struct ProviderAgreementTests {
    @Test func pgRoutingOverACallersPoolAgreesWithItsOwn() async throws {
        let address = try await HelsinkiDatabase.imported().address
        let own = PgRoutingRoutes(address: address, timeout: HelsinkiDatabase.queryDeadline, logger: HelsinkiDatabase.logger)
        let configuration = PostgresClient.Configuration(
            host: address.host, port: address.port, username: address.username, password: address.password, database: address.database,
            tls: .disable)
        let client = PostgresClient(configuration: configuration, backgroundLogger: HelsinkiDatabase.logger)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await client.run() }
            defer { group.cancelAll() }
            let callers = PgRoutingRoutes(client: client, timeout: HelsinkiDatabase.queryDeadline, logger: HelsinkiDatabase.logger)
            try await RouteProviderConformance.checkAgree(own, callers, pairs: HelsinkiPairs.pairs, tolerance: 0.05)
        }
    }
}
