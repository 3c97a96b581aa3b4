import BusModel
import Foundation
import GRDB
import Wire

/// The transactional outbox of the reliability model (docs/design.md): a service that changes state
/// appends the event that reports the change in the same transaction, so a change is never
/// stored without its event nor published without its change. Sequences are the row numbers:
/// gap-free per source, because SQLite serialises writers and rows are never deleted.
///
/// `OutboxRelay` sends the rows in order and marks them published; after a crash it sends what
/// was left. The `events` op serves them again to a consumer that saw a gap (the Clone pattern).
public enum Outbox {
    /// The outbox table; call from a migration.
    public static func createTable(_ db: Database) throws {
        try db.execute(
            sql: """
                CREATE TABLE outbox (
                    sequence INTEGER PRIMARY KEY NOT NULL,
                    id TEXT NOT NULL,
                    topic TEXT NOT NULL,
                    type TEXT NOT NULL,
                    time_ms INTEGER NOT NULL,
                    data BLOB NOT NULL,
                    published INTEGER NOT NULL DEFAULT 0
                );
                CREATE INDEX outbox_unpublished ON outbox (published, sequence);
                """)
    }

    /// The migration every service with an outbox adds (a new one of its own, after its others):
    /// the trace context of the span that appended each row, so the relay's `publish` span — even
    /// after a restart — continues that trace (docs/tracing.md). Null when tracing is off.
    public static let traceColumnsSQL = """
        ALTER TABLE outbox ADD COLUMN traceparent TEXT;
        ALTER TABLE outbox ADD COLUMN tracestate TEXT;
        """

    /// Appends an event inside the caller's write transaction; returns its sequence. `trace`: the
    /// current span's (see `DatabaseWriter.tracedWrite`, which makes it current inside the transaction).
    @discardableResult
    public static func append(
        _ db: Database, topic: String, type: String, data: some Encodable, time: Date = Date(), trace: TraceHeaders? = Trace.currentHeaders
    ) throws -> UInt64 {
        if let problem = Topic.problem(with: topic) {
            throw ServiceError(status: 500, code: "internal", message: "outbox topic: \(problem)")
        }
        let sequence = try lastSequence(db) + 1
        try db.run(
            "INSERT INTO outbox (sequence, id, topic, type, time_ms, data, traceparent, tracestate) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            [
                Int64(sequence), EventID.next(), topic, type, Int64((time.timeIntervalSince1970 * 1000).rounded()),
                Data(try JSONCoding.encode(data)),
                trace?.traceparent, trace?.tracestate,
            ])
        return sequence
    }

    /// Up to `limit` events not yet published, oldest first.
    public static func unpublished(_ db: Database, limit: Int = 500) throws -> [StoredEvent] {
        try StoredEvent.fetch(db, sql: "SELECT * FROM outbox WHERE published = 0 ORDER BY sequence LIMIT ?", arguments: [limit])
    }

    public static func markPublished(_ db: Database, through sequence: UInt64) throws {
        try db.run("UPDATE outbox SET published = 1 WHERE published = 0 AND sequence <= ?", [Int64(sequence)])
    }

    /// Events after `sequence`, oldest first: what the `events` op returns.
    public static func events(_ db: Database, after sequence: UInt64, limit: Int) throws -> [StoredEvent] {
        try StoredEvent.fetch(
            db, sql: "SELECT * FROM outbox WHERE sequence > ? ORDER BY sequence LIMIT ?", arguments: [Int64(sequence), limit])
    }

    /// The last sequence appended (0 when none).
    public static func lastSequence(_ db: Database) throws -> UInt64 {
        try db.value(UInt64.self, "SELECT MAX(sequence) FROM outbox") ?? 0
    }
}

/// One outbox row.
public struct StoredEvent: Sendable, Equatable {
    public var sequence: UInt64
    public var id: String
    public var topic: String
    public var type: String
    public var time: Date
    /// The event's data, as JSON.
    public var data: [UInt8]
    /// The trace context of the span that appended the row (nil: none, or tracing was off).
    public var trace: TraceHeaders? = nil

    /// The CloudEvent as sent on the bus, carrying `trace` (the relay's publish span's).
    public func envelope(source: String, trace: TraceHeaders? = nil) -> [UInt8] {
        EnvelopeWriter.write(id: id, source: source, type: type, time: time, sequence: sequence, data: data, trace: trace)
    }

    static func fetch(_ db: Database, sql: String, arguments: StatementArguments) throws -> [StoredEvent] {
        try Row.fetchAll(db.cachedStatement(sql: sql), arguments: arguments).map { row in
            StoredEvent(
                sequence: UInt64(row["sequence"] as Int64), id: row["id"], topic: row["topic"], type: row["type"],
                time: Date(timeIntervalSince1970: Double(row["time_ms"] as Int64) / 1000), data: [UInt8](row["data"] as Data),
                trace: TraceHeaders(traceparent: row["traceparent"], tracestate: row["tracestate"]))
        }
    }
}

extension Outbox {
    /// The `events` op's answer for `source`.
    public static func page(_ db: Database, source: String, query: EventsQuery) throws -> EventsPage {
        let events = try Outbox.events(db, after: query.after, limit: try query.checkedLimit())
        return EventsPage(events: events.map { $0.cloudEvent(source: source) }, lastSequence: try Outbox.lastSequence(db))
    }
}

extension EventsQuery {
    /// The page size asked for (500 when not given); 422 outside 1...5000.
    public func checkedLimit() throws -> Int {
        let limit = self.limit ?? 500
        guard (1...5000).contains(limit) else {
            throw ServiceError.unprocessable("invalid_params", "limit: must be from 1 to 5000, got \(limit)")
        }
        return limit
    }
}

extension StoredEvent {
    /// The event as the `events` op returns it.
    public func cloudEvent(source: String) -> CloudEvent<JSONValue> {
        CloudEvent<JSONValue>(
            id: id, source: source, type: type, time: time, sequence: sequence,
            data: (try? JSONCoding.decode(JSONValue.self, from: data)) ?? .null, trace: trace)
    }
}
