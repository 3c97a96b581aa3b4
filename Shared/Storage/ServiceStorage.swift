import Bus
import Foundation
import GRDB
import Logging
import ServiceKit

/// A stateful service's store and its way to the bus, set up the same way by every service: the
/// data directory made, the database opened (or the process stopped with exit 70 and a message
/// naming the file), the publisher connected, and the outbox relay ready to run.
public struct ServiceStorage<Store: Sendable>: Sendable {
    public let store: Store
    public let publisher: EventPublisher
    public let relay: OutboxRelay

    public static func open(program: String, source: String, dataDirectory: String, databasePath: String, publishTo endpoint: String,
                            logger: Logger, store makeStore: (String) throws -> Store,
                            database: (Store) -> any DatabaseWriter) async throws -> ServiceStorage {
        let store: Store
        do {
            try FileManager.default.createDirectory(atPath: dataDirectory, withIntermediateDirectories: true)
            store = try makeStore(databasePath)
        } catch {
            throw exitWithError("cannot open the database \(databasePath): \(error)", program: program, code: ExitCodes.software)
        }
        let publisher = try await EventPublisher(endpoint: endpoint, source: source, logger: logger)
        return ServiceStorage(store: store, publisher: publisher, relay: OutboxRelay(database: database(store), publisher: publisher, source: source, logger: logger))
    }
}
