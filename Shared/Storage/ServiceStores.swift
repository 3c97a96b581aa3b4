import BusModel
import GRDB

/// A service's store in one SQLite file that has the outbox and the request table
/// (`ServiceDatabase.open(…, outbox: true)`): its event log and request log come with it.
public protocol SQLiteServiceStore {
    var database: DatabasePool { get }
}

extension SQLiteServiceStore {
    /// The outbox, for the relay, the `events` op and a reactor's catch-up.
    public var eventLog: any EventLog { SQLiteEventLog(database: database) }
    /// The keyed requests answered, which make every op idempotent for a `request_id`.
    public var requestLog: any RequestLog { SQLiteRequestLog(database: database) }
}

/// The same for a service's schema of a shared PostgreSQL database (`PostgresSchema.open(…, outbox: true)`).
public protocol PostgresServiceStore: PostgresSchemaStore {}

extension PostgresServiceStore {
    public var eventLog: any EventLog { PostgresEventLog(database: postgres) }
    public var requestLog: any RequestLog { PostgresRequestLog(postgres: postgres) }
}
