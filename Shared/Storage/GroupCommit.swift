import BusModel
import GRDB
import Synchronization
import Tracing

/// Write transactions of concurrent callers committed together (a "group commit"): each
/// caller's work runs in its own savepoint — one that throws is undone alone and gets its own
/// error — and one COMMIT ends the group. A caller returns only after that commit, so what it
/// wrote is durable and visible to reads exactly as with `DatabasePool.write`.
///
/// Why: under load a service's writes queue up behind SQLite's single writer, and each commit
/// costs on its own — WAL frames for every page it touched (the outbox's last page, an index's
/// pages, again and again), file locks, and two thread hand-offs. In `ridectl bench lifecycle`
/// the database threads were 40% of the machine's CPU; in ride-orders a sixth of their time
/// went to `pwrite` alone.
///
/// When the group's transaction is lost (SQLite rolls it back itself on a full disk or an I/O
/// error) or its COMMIT fails, nothing of the group was stored: every caller gets an error —
/// its own when its work failed, else the group's.
public final class GroupCommit: Sendable {
    public let database: DatabasePool
    private let queue = Mutex(Queue())

    private struct Queue {
        var waiting: [PendingWrite] = []
        var draining = false
    }

    /// One caller's work and the way back to it.
    private struct PendingWrite: Sendable {
        /// Runs the work in a savepoint and keeps its outcome; returns its error, if any.
        let run: @Sendable (Database) -> (any Error)?
        /// Resumes the caller: with the kept outcome when the group committed, else with `failure`.
        let finish: @Sendable (_ failure: (any Error)?) -> Void
    }

    /// The outcome of one caller's work, kept from its savepoint until the group's commit.
    private final class Outcome<Value: Sendable>: Sendable {
        let result = Mutex<Result<Value, any Error>?>(nil)
    }

    public init(database: DatabasePool) { self.database = database }

    /// Runs `body` in the next group's transaction; returns its value once the group committed.
    /// With tracing on, the wait and the commit are a `db.commit` span, and the caller's trace is
    /// current inside `body` (so the outbox rows it appends carry it; see `tracedWrite`).
    public func write<Value: Sendable>(_ body: @escaping @Sendable (Database) throws -> Value) async throws -> Value {
        guard Trace.isEnabled else { return try await groupWrite(body) }
        return try await Trace.span("db.commit", kind: .internal) { _ in
            let context = ServiceContext.current
            return try await groupWrite { db in try ServiceContext.withValue(context) { try body(db) } }
        }
    }

    private func groupWrite<Value: Sendable>(_ body: @escaping @Sendable (Database) throws -> Value) async throws -> Value {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Value, any Error>) in
            let outcome = Outcome<Value>()
            enqueue(
                PendingWrite(
                    run: { db in
                        let result = Result<Value, any Error> {
                            var value: Value?
                            try db.inSavepoint {
                                value = try body(db)
                                return .commit
                            }
                            return value!
                        }
                        outcome.result.withLock { $0 = result }
                        if case .failure(let error) = result { return error }
                        return nil
                    },
                    finish: { failure in
                        let kept = outcome.result.withLock { $0 }
                        switch (kept, failure) {
                        case (.failure(let own)?, _): continuation.resume(throwing: own)
                        case (_, let failure?): continuation.resume(throwing: failure)
                        case (let kept?, nil): continuation.resume(with: kept)
                        case (nil, nil): continuation.resume(throwing: GroupLost())
                        }
                    }))
        }
    }

    private func enqueue(_ write: PendingWrite) {
        let start = queue.withLock { queue in
            queue.waiting.append(write)
            defer { queue.draining = true }
            return !queue.draining
        }
        if start { Task { await drain() } }
    }

    /// Commits groups until nobody waits: each group is everything that queued while the last one ran.
    private func drain() async {
        while true {
            let group = queue.withLock { queue in
                defer { queue.waiting = [] }
                if queue.waiting.isEmpty { queue.draining = false }
                return queue.waiting
            }
            if group.isEmpty { return }
            do {
                try await database.write { db in
                    for write in group {
                        let failure = write.run(db)
                        // SQLite rolled the whole transaction back (full disk, I/O error): what
                        // ran before is gone too, so the group fails as one, with that error.
                        guard db.isInsideTransaction else { throw failure ?? GroupLost() }
                    }
                }
                group.forEach { $0.finish(nil) }
            } catch {
                group.forEach { $0.finish(error) }
            }
        }
    }

    /// The group's transaction ended before its commit without an error to say why.
    struct GroupLost: Error, CustomStringConvertible {
        var description: String { "the write's transaction was rolled back before it could commit" }
    }
}
