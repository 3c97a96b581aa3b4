import Foundation
import Logging
import PostgresNIO
import RoadServers
import TestPostgres
import TestProcess

/// The Helsinki extract imported once per test run, by `PgRoutingImport` as `ridectl roads
/// import-pg` does it, into a database of the throwaway PostgreSQL server.
enum HelsinkiDatabase {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    static let logger = {
        var logger = Logger(label: "road-servers-tests")
        logger.logLevel = .warning
        return logger
    }()

    /// How long a test waits for pgRouting's answer: riders get 2 s, but a cold database beside the
    /// whole suite on two cores has taken more than 5 s for its first queries.
    static let queryDeadline: Duration = .seconds(60)

    /// The database's address and what the import reported.
    static func imported() async throws -> (address: DatabaseAddress, report: PgRoutingImport.Report) {
        try await Shared.task.value
    }

    private enum Shared {
        static let task = Task { try await HelsinkiDatabase.importOnce() }
    }

    static func importOnce() async throws -> (address: DatabaseAddress, report: PgRoutingImport.Report) {
        let address = try await newDatabase()
        let report = try await PgRoutingImport(extract: try await extract(), address: address, graphScript: graphScript).run(logger: logger)
        return (address, report)
    }

    /// `Tools/roads/build-graph.py`, the road rules the import applies.
    static let graphScript = repository.appendingPathComponent("Tools/roads/build-graph.py").path

    /// Runs one statement in the database at `address`.
    static func execute(_ sql: String, in address: DatabaseAddress) async throws {
        let configuration = PostgresConnection.Configuration(
            host: address.host, port: address.port, username: address.username, password: address.password, database: address.database,
            tls: .disable)
        let connection = try await PostgresConnection.connect(configuration: configuration, id: 1, logger: logger)
        do {
            try await connection.query(PostgresQuery(unsafeSQL: sql), logger: logger)
            try await connection.close()
        } catch {
            try? await connection.close()
            throw error
        }
    }

    /// A new empty database on the test server.
    static func newDatabase() async throws -> DatabaseAddress {
        let url = try await TestPostgresServer.newDatabase()
        return DatabaseAddress(host: url.host, port: url.port, username: url.username, password: url.password, database: url.database)
    }

    /// `.build/roads/Helsinki.osm.pbf`, fetched by the project's script when it is not there yet.
    static func extract() async throws -> String {
        let path = try await TestProcess.output(repository.appendingPathComponent("Tools/roads/fetch-extract.sh").path, [], in: repository)
        return repository.appendingPathComponent(path.trimmingCharacters(in: .whitespacesAndNewlines)).path
    }
}
