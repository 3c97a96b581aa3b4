import Foundation
import GRDB
import Storage
import Synchronization
import Testing

/// `GroupCommit`: writes that queue while the writer is busy commit together, each in its own
/// savepoint, and each caller still gets exactly its own outcome.
@Suite struct GroupCommitTests {
    struct Refused: Error, Equatable {}

    /// Counts the commits of the database it observes.
    final class CommitCounter: TransactionObserver, Sendable {
        let commits = Mutex(0)
        func observes(eventsOfKind eventKind: DatabaseEventKind) -> Bool { true }
        func databaseDidChange(with event: DatabaseEvent) {}
        func databaseDidCommit(_ db: Database) { commits.withLock { $0 += 1 } }
        func databaseDidRollback(_ db: Database) {}
    }

    final class Flag: Sendable { let value = Atomic(false) }

    struct Fixture {
        let file = TemporaryFile()
        let pool: DatabasePool
        let writes: GroupCommit
        let counter = CommitCounter()

        init() throws {
            pool = try ServiceDatabase.open(
                path: file.path, migrations: [("v1", "CREATE TABLE t (n INTEGER PRIMARY KEY);"), ("v2", Outbox.traceColumnsSQL)],
                outbox: true)
            writes = GroupCommit(database: pool)
            pool.add(transactionObserver: counter)
        }

        func stored() async throws -> [Int] { try await pool.read { db in try Int.fetchAll(db, sql: "SELECT n FROM t ORDER BY n") } }

        /// Starts `writes` while a group of one slow write holds the writer, so that they queue and go as the next group.
        func queuedBehindASlowGroup<Value: Sendable>(_ writes: [@Sendable () async throws -> Value]) async -> [Result<Value, any Error>] {
            let started = Flag()
            let holding = Task {
                try await self.writes.write { _ in
                    started.value.store(true, ordering: .sequentiallyConsistent)
                    Thread.sleep(forTimeInterval: 0.3)
                }
            }
            while !started.value.load(ordering: .sequentiallyConsistent) { try? await Task.sleep(for: .milliseconds(5)) }
            let tasks = writes.map { write in Task { try await write() } }
            _ = await holding.result
            var results: [Result<Value, any Error>] = []
            for task in tasks { results.append(await task.result) }
            return results
        }
    }

    @Test func queuedWritesCommitTogetherAndAFailedOneIsUndoneAlone() async throws {
        let fixture = try Fixture()
        let writes = fixture.writes
        let results = await fixture.queuedBehindASlowGroup(
            (1...6).map { n in
                { @Sendable in
                    try await writes.write { db in
                        try db.run("INSERT INTO t (n) VALUES (?)", [n])
                        try Outbox.append(db, topic: "t.n", type: "t.n", data: ["n": n])
                        if n == 3 { throw Refused() }
                        return n * 10
                    }
                }
            })
        #expect(results.map { try? $0.get() } == [10, 20, nil, 40, 50, 60])
        #expect(throws: Refused.self) { try results[2].get() }
        #expect(try await fixture.stored() == [1, 2, 4, 5, 6], "the refused write's row is undone, the others' kept")
        let sequences = try await fixture.pool.read { db in try Outbox.events(db, after: 0, limit: 10).map(\.sequence) }
        #expect(sequences == [1, 2, 3, 4, 5], "the outbox stays gap-free across the undone savepoint")
        #expect(fixture.counter.commits.withLock { $0 } == 2, "the slow group's commit, then one for the six")
    }

    @Test func whenSQLiteRollsTheGroupBackEveryCallerInItFailsAndNothingIsStored() async throws {
        let fixture = try Fixture()
        let writes = fixture.writes
        let results = await fixture.queuedBehindASlowGroup(
            (1...4).map { n in
                { @Sendable in
                    try await writes.write { db in
                        try db.run("INSERT INTO t (n) VALUES (?)", [n])
                        // What SQLite does itself on a full disk or an I/O error: the transaction is gone.
                        if n == 3 { try db.execute(sql: "ROLLBACK") }
                        return n
                    }
                }
            })
        for (index, result) in results.enumerated() {
            #expect(throws: (any Error).self, "write \(index + 1) was in the rolled-back group") { try result.get() }
        }
        #expect(try await fixture.stored() == [])
        #expect(
            try await writes.write { db in
                try db.run("INSERT INTO t (n) VALUES (9)")
                return true
            }, "the next group commits")
        #expect(try await fixture.stored() == [9])
    }
}
