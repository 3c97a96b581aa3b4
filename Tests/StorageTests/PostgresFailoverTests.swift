import Bus
import Foundation
import PostgresNIO
import Synchronization
import TestPostgres
import Testing

@testable import Storage

/// A primary with a synchronous standby, and a schema given both hosts
/// (`target_session_attrs=read-write`): the primary killed in the middle of a stream of writes,
/// the standby promoted, and the schema finds it on its own and goes on — every write it was told
/// committed is there, none twice.
@Suite(.serialized) struct PostgresFailoverTests {
    @Test func theSchemaFindsThePromotedStandbyAndLosesNoCommittedWrite() async throws {
        let primary = try await TestPostgresServer.start(settings: ["synchronous_commit=on", "synchronous_standby_names=*"])
        let standby = try await primary.standby()
        var url = try await primary.newDatabase()
        url.hosts.append(.init(standby.host, port: standby.port))
        url.targetSessionAttrs = .readWrite
        let database = try await PostgresSchema.open(
            url: url, schema: "failover", migrations: [("v1", "CREATE TABLE writes (n BIGINT PRIMARY KEY NOT NULL)")], outbox: false,
            logger: testLogger)
        defer { database.close() }

        // A writer: each number until it is committed (a retry of one whose answer was lost inserts nothing).
        let committed = Mutex<[Int64]>([])
        let writer = Task {
            var n: Int64 = 1
            while !Task.isCancelled {
                do {
                    let next = n
                    try await database.write { connection in
                        try await connection.query("INSERT INTO writes (n) VALUES (\(next)) ON CONFLICT (n) DO NOTHING", logger: testLogger)
                    }
                    committed.withLock { $0.append(next) }
                    n += 1
                } catch {
                    try? await Task.sleep(for: .milliseconds(50))
                }
            }
        }
        defer { writer.cancel() }
        // The deadlines below only catch a writer that is stuck: each write waits for the standby's
        // flush, which under make test's load (the tests and the fuzzer's build) took over half a second.
        #expect(await eventually(.seconds(180)) { committed.withLock { $0.count } >= 20 }, "writes on the primary")

        try await primary.stop(immediate: true)  // the primary's host is lost
        let lost = ContinuousClock.now
        let before = committed.withLock { $0.count }
        try await standby.promote()
        let promoted = ContinuousClock.now - lost
        #expect(await eventually(.seconds(30)) { database.pool.withLock { $0.host } == 1 }, "the pool moves to the promoted standby")
        let moved = ContinuousClock.now - lost
        #expect(await eventually(.seconds(180)) { committed.withLock { $0.count } >= before + 20 }, "writes on the promoted standby")
        writer.cancel()
        _ = await writer.value
        let back = ContinuousClock.now - lost
        // A write in flight when the primary went is answered when the pool moves, not at the
        // 30 s call deadline: the writer is back well before it.
        #expect(back < .seconds(15), "writes again after \(back)")
        print("PostgresFailoverTests: promoted after \(promoted), the pool moved after \(moved), writes again after \(back)")

        let stored = try await database.write { connection in
            var numbers: [Int64] = []
            for try await n in try await connection.query("SELECT n FROM writes ORDER BY n", logger: testLogger).decode(Int64.self) {
                numbers.append(n)
            }
            return numbers
        }
        let told = committed.withLock { $0 }
        #expect(
            Set(told).isSubset(of: Set(stored)),
            "every committed write is on the new primary: missing \(Set(told).subtracting(stored).sorted())")
        #expect(
            stored.count == Set(stored).count && stored.count <= told.count + 1,
            "none twice, at most the one in flight more: \(stored.count) for \(told.count)")
        #expect(database.pool.withLock { $0.host } == 1, "the pool moved to the standby")
    }
}
