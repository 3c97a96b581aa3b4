import BusModel
import Foundation
import Logging
import PostgresNIO
import Wire

/// The transactional outbox (see `Outbox`) in a PostgreSQL schema shared by several instances.
/// Sequences stay gap-free and commit in order because each append first takes a transaction-level
/// advisory lock on the schema's outbox: writers of events queue there until the holder commits
/// or rolls back, as SQLite's single writer does. One relay sends at a time for the same reason:
/// the others find the lock taken and step aside, so an event is not sent once per instance.
public enum PostgresOutbox {
    static let tableSQL = """
        CREATE TABLE outbox (
            sequence BIGINT PRIMARY KEY NOT NULL,
            id TEXT NOT NULL,
            topic TEXT NOT NULL,
            type TEXT NOT NULL,
            time_ms BIGINT NOT NULL,
            data TEXT NOT NULL,
            published BOOLEAN NOT NULL DEFAULT FALSE
        );
        CREATE INDEX outbox_unpublished ON outbox (published, sequence);
        """

    /// Appends an event inside the caller's transaction; returns its sequence.
    @discardableResult
    public static func append(
        _ connection: PostgresConnection, topic: String, type: String, data: some Encodable, time: Date = Date(),
        trace: TraceHeaders? = Trace.currentHeaders, logger: Logger
    ) async throws -> UInt64 {
        if let problem = Topic.problem(with: topic) {
            throw ServiceError(status: 500, code: "internal", message: "outbox topic: \(problem)")
        }
        let json = String(decoding: try JSONCoding.encode(data), as: UTF8.self)
        let timeMS = Int64((time.timeIntervalSince1970 * 1000).rounded())
        try await connection.query("SELECT pg_advisory_xact_lock(hashtext('ride.outbox.' || current_schema()))", logger: logger)
        let sequence = try await connection.first(
            """
            INSERT INTO outbox (sequence, id, topic, type, time_ms, data, traceparent, tracestate)
            SELECT COALESCE(MAX(sequence), 0) + 1, \(EventID.next()), \(topic), \(type), \(timeMS), \(json), \(trace?.traceparent), \(trace?.tracestate) FROM outbox
            RETURNING sequence
            """, as: Int64.self, logger: logger)
        return UInt64(sequence ?? 0)
    }

    static func events(_ connection: PostgresConnection, after sequence: UInt64, limit: Int, unpublishedOnly: Bool, logger: Logger)
        async throws -> [StoredEvent]
    {
        let after = Int64(sequence)
        let query: PostgresQuery =
            unpublishedOnly
            ? "SELECT sequence, id, topic, type, time_ms, data, traceparent, tracestate FROM outbox WHERE published = FALSE ORDER BY sequence LIMIT \(limit)"
            : "SELECT sequence, id, topic, type, time_ms, data, traceparent, tracestate FROM outbox WHERE sequence > \(after) ORDER BY sequence LIMIT \(limit)"
        return try await connection.all(query, as: (Int64, String, String, String, Int64, String, String?, String?).self, logger: logger)
            .map { row in
                StoredEvent(
                    sequence: UInt64(row.0), id: row.1, topic: row.2, type: row.3,
                    time: Date(timeIntervalSince1970: Double(row.4) / 1000), data: Array(row.5.utf8),
                    trace: TraceHeaders(traceparent: row.6, tracestate: row.7))
            }
    }

    static func lastSequence(_ connection: PostgresConnection, logger: Logger) async throws -> UInt64 {
        let last: Int64? = try await connection.first("SELECT COALESCE(MAX(sequence), 0) FROM outbox", as: Int64.self, logger: logger)
        return UInt64(last ?? 0)
    }
}

/// The outbox of a service's PostgreSQL schema.
public struct PostgresEventLog: EventLog {
    public let database: PostgresSchema

    public init(database: PostgresSchema) { self.database = database }

    public func relayBatch(limit: Int, send: @escaping @Sendable ([StoredEvent]) throws -> Void) async throws -> RelayBatch {
        let logger = database.logger
        return try await database.write { connection in
            let locked = try await connection.first(
                "SELECT pg_try_advisory_xact_lock(hashtext('ride.relay.' || current_schema()))",
                as: Bool.self, logger: logger)
            guard locked == true else { return .busy }
            let batch = try await PostgresOutbox.events(connection, after: 0, limit: limit, unpublishedOnly: true, logger: logger)
            guard let last = batch.last else { return .empty }
            try send(batch)
            try await connection.run(
                "UPDATE outbox SET published = TRUE WHERE published = FALSE AND sequence <= \(Int64(last.sequence))", logger: logger)
            return .sent(batch.count)
        }
    }

    public func page(source: String, query: EventsQuery) async throws -> EventsPage {
        let limit = try query.checkedLimit()
        let logger = database.logger
        return try await database.read { connection in
            let events = try await PostgresOutbox.events(
                connection, after: query.after, limit: limit, unpublishedOnly: false, logger: logger)
            return EventsPage(
                events: events.map { $0.cloudEvent(source: source) },
                lastSequence: try await PostgresOutbox.lastSequence(connection, logger: logger))
        }
    }
}

/// A store on PostgreSQL whose migrations made the `reactor_cursors` table (`ReactorCursorTable.sql`): the two methods come with it.
public protocol PostgresReactorCursors: ReactorCursors {
    var postgres: PostgresSchema { get }
}

extension PostgresReactorCursors {
    public func reactorCursor(source: String) async throws -> UInt64 {
        let logger = postgres.logger
        return try await postgres.read { connection in
            let sequence: Int64? = try await connection.first(
                "SELECT sequence FROM reactor_cursors WHERE source = \(source)", as: Int64.self, logger: logger)
            return UInt64(sequence ?? 0)
        }
    }

    public func saveReactorCursor(source: String, sequence: UInt64) async throws {
        let logger = postgres.logger
        try await postgres.write { connection in
            try await connection.run(
                """
                INSERT INTO reactor_cursors (source, sequence) VALUES (\(source), \(Int64(sequence)))
                ON CONFLICT (source) DO UPDATE SET sequence = excluded.sequence
                """, logger: logger)
        }
    }
}
