import BusModel
import GRDB

/// A service's outbox as its relay and its `events` op see it, whichever database holds it.
public protocol EventLog: Sendable {
    /// Sends the oldest unpublished events (up to `limit`, in sequence order) through `send`, then
    /// marks them published. A `send` that throws leaves them unpublished, to be sent again.
    func relayBatch(limit: Int, send: @escaping @Sendable ([StoredEvent]) throws -> Void) async throws -> RelayBatch
    /// The `events` op's answer for `source`.
    func page(source: String, query: EventsQuery) async throws -> EventsPage
}

public enum RelayBatch: Equatable, Sendable {
    /// This many events were sent and marked.
    case sent(Int)
    /// Nothing is left to send.
    case empty
    /// Another instance's relay is sending this outbox right now (PostgreSQL): try again shortly.
    case busy
}

/// The outbox in the service's SQLite file. One process writes the file at a time, so one relay
/// sends at a time without a lock of its own.
public struct SQLiteEventLog: EventLog {
    public let database: any DatabaseWriter

    public init(database: any DatabaseWriter) { self.database = database }

    public func relayBatch(limit: Int, send: @escaping @Sendable ([StoredEvent]) throws -> Void) async throws -> RelayBatch {
        let batch = try await database.read { db in try Outbox.unpublished(db, limit: limit) }
        guard let last = batch.last else { return .empty }
        try send(batch)
        try await database.write { db in try Outbox.markPublished(db, through: last.sequence) }
        return .sent(batch.count)
    }

    public func page(source: String, query: EventsQuery) async throws -> EventsPage {
        try await database.read { db in try Outbox.page(db, source: source, query: query) }
    }
}
