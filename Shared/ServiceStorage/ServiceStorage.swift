import Bus
import Foundation
import Logging
import PostgresNIO
import ServiceKit
import SettingsKit
import Storage

/// A stateful service's store and its way to the bus, set up the same way by every service: the
/// store opened where `location` says (or the process stopped with exit 70 and a message naming
/// the file or database), the publisher connected, and the outbox relay ready to run.
public struct ServiceStorage<Store: Sendable>: Sendable {
    public let store: Store
    public let publisher: EventPublisher
    public let relay: OutboxRelay

    /// - Parameters:
    ///   - sqlite: opens the store in a SQLite file (its folder is made first).
    ///   - postgres: opens the store in PostgreSQL; nil for a service that keeps SQLite only.
    public static func open(
        program: String, source: String, location: StorageLocation, publishTo endpoint: String, logger: Logger,
        sqlite: (String) throws -> Store, postgres: ((PostgresURL) async throws -> Store)? = nil,
        eventLog: (Store) -> any EventLog
    ) async throws -> ServiceStorage {
        let store = try await location.open(program: program, sqlite: sqlite, postgres: postgres)
        let publisher = try await EventPublisher(endpoint: endpoint, source: source, logger: logger)
        return ServiceStorage(
            store: store, publisher: publisher,
            relay: OutboxRelay(log: eventLog(store), publisher: publisher, source: source, logger: logger))
    }

    /// `host`'s storage where `settings.database` says, publishing as `host.service` to `settings.pub`.
    public static func open(
        for host: ServiceHost, _ settings: some StoredServiceSettings, sqlite: (String) throws -> Store,
        postgres: @escaping (PostgresURL, Logger) async throws -> Store, eventLog: (Store) -> any EventLog
    ) async throws -> ServiceStorage {
        try await open(
            program: host.program, source: host.service, location: settings.database, publishTo: settings.pub, logger: host.logger,
            sqlite: sqlite, postgres: { [logger = host.logger] in try await postgres($0, logger) }, eventLog: eventLog)
    }
}

/// The settings of a service that keeps its state in a store (`--database-url`, else SQLite under
/// `--data-dir`) and publishes what it commits.
public protocol StoredServiceSettings: BusClientSettings {
    var database: StorageLocation { get }
}

extension StorageLocation {
    /// The store this location says — a SQLite file (its folder made first) or PostgreSQL — or the
    /// process stopped with exit 70 and a message naming the file or database. `prepare` reads what
    /// the service starts from; a failure there stops it the same way.
    public func open<Store>(
        program: String, sqlite: (String) throws -> Store, postgres: ((PostgresURL) async throws -> Store)?,
        prepare: (Store) async throws -> Void = { _ in }
    ) async throws -> Store {
        do {
            let store: Store
            switch self {
            case .sqlite(let path):
                try FileManager.default.createDirectory(
                    atPath: URL(fileURLWithPath: path).deletingLastPathComponent().path, withIntermediateDirectories: true)
                store = try sqlite(path)
            case .postgres(let url):
                guard let postgres else { throw ConfigurationError("\(program) keeps its state in SQLite only") }
                store = try await postgres(url)
            }
            try await prepare(store)
            return store
        } catch {
            let detail = (error as? PSQLError)?.summary ?? "\(error)"  // its description hides the server's message
            throw exitWithError("cannot open the database (\(self)): \(detail)", program: program, code: ExitCodes.software)
        }
    }
}

extension ServiceHost {
    /// `/readyz` waits for the database, as the outbox relay last found it.
    public func needsDatabase(_ relay: OutboxRelay) {
        readiness.add("database") { relay.databaseProblem }
    }
}
