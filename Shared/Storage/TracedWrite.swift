import BusModel
import GRDB
import Tracing

extension DatabaseWriter {
    /// `write` for a transaction that appends to the outbox. GRDB runs the transaction on its own
    /// thread, where the calling task's trace is not current: this makes it current there, so
    /// `Outbox.append` stores it with the row. With tracing on, the transaction is a `db.commit` span.
    public func tracedWrite<T: Sendable>(_ updates: @escaping @Sendable (Database) throws -> T) async throws -> T {
        guard Trace.isEnabled else { return try await write(updates) }
        return try await Trace.span("db.commit", kind: .internal) { _ in
            let context = ServiceContext.current
            return try await write { db in try ServiceContext.withValue(context) { try updates(db) } }
        }
    }
}
