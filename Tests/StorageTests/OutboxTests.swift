import Bus
import Foundation
import GRDB
import PostgresNIO
import Storage
import Synchronization
import Testing

/// An outbox on either database, with a way to append in a transaction that commits or fails.
protocol OutboxFixture: Sendable {
    var log: any EventLog { get }
    /// Appends one event `{"n": n}` per value in one transaction; throws `Abort` after appending when `fail`.
    func append(_ values: [Int], fail: Bool) async throws -> [UInt64]
    func close()
}

struct Abort: Error {}

/// The trace context the fixtures store with the event `{"n": 7}` (none with the others).
enum OutboxTrace {
    static let seven = TraceHeaders(
        traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", tracestate: "rojo=00f067aa0ba902b7")
    static func of(_ n: Int) -> TraceHeaders? { n == 7 ? seven : nil }
}

extension OutboxFixture {
    func append(_ n: Int) async throws -> UInt64 { try await append([n], fail: false)[0] }
}

struct SQLiteOutbox: OutboxFixture {
    let file = TemporaryFile()
    let pool: DatabasePool
    init() throws {
        pool = try ServiceDatabase.open(
            path: file.path, migrations: [("v1", "CREATE TABLE t (x INTEGER);"), ("v2", Outbox.traceColumnsSQL)], outbox: true)
    }
    var log: any EventLog { SQLiteEventLog(database: pool) }
    func append(_ values: [Int], fail: Bool) async throws -> [UInt64] {
        try await pool.write { db in
            let sequences = try values.map { try Outbox.append(db, topic: "a.b", type: "a.b", data: ["n": $0], trace: OutboxTrace.of($0)) }
            if fail { throw Abort() }
            return sequences
        }
    }
    func close() {}
}

struct PostgresOutboxFixture: OutboxFixture {
    let schema: PostgresSchema
    static func open() async throws -> PostgresOutboxFixture {
        PostgresOutboxFixture(
            schema: try await PostgresSchema.open(
                url: try await freshPostgres(), schema: "outboxtest",
                migrations: [("v1", "CREATE TABLE t (x INT);"), ("v2", Outbox.traceColumnsSQL)], outbox: true, logger: testLogger))
    }
    var log: any EventLog { PostgresEventLog(database: schema) }
    func append(_ values: [Int], fail: Bool) async throws -> [UInt64] {
        try await schema.write { connection in
            var sequences: [UInt64] = []
            for n in values {
                sequences.append(
                    try await PostgresOutbox.append(
                        connection, topic: "a.b", type: "a.b", data: ["n": n], trace: OutboxTrace.of(n), logger: testLogger))
            }
            if fail { throw Abort() }
            return sequences
        }
    }
    func close() { schema.close() }
}

func outbox(_ backend: Backend) async throws -> any OutboxFixture {
    switch backend {
    case .sqlite: try SQLiteOutbox()
    case .postgres: try await PostgresOutboxFixture.open()
    }
}

@Suite struct OutboxTests {
    /// The trace context is stored with its row (docs/tracing.md): the relay and the `events` op get it back.
    @Test(arguments: Backend.allCases)
    func aRowKeepsTheTraceItWasAppendedWith(backend: Backend) async throws {
        let fixture = try await outbox(backend)
        defer { fixture.close() }
        _ = try await fixture.append([7, 8], fail: false)
        let sent = Mutex<[StoredEvent]>([])
        _ = try await fixture.log.relayBatch(limit: 10) { batch in sent.withLock { $0 += batch } }
        #expect(sent.withLock { $0.map(\.trace) } == [OutboxTrace.seven, nil])
        let page = try await fixture.log.page(source: "s", query: EventsQuery(after: 0, limit: 10))
        #expect(page.events.map(\.trace) == [OutboxTrace.seven, nil])
    }

    @Test(arguments: Backend.allCases)
    func sequencesAreGapFreeAndPagesComeInOrder(backend: Backend) async throws {
        let fixture = try await outbox(backend)
        defer { fixture.close() }
        var sequences: [UInt64] = []
        for n in 1...5 { sequences.append(try await fixture.append(n)) }
        #expect(sequences == [1, 2, 3, 4, 5])
        let page = try await fixture.log.page(source: "users", query: EventsQuery(after: 2, limit: 2))
        #expect(page.events.map(\.sequence) == [3, 4])
        #expect(page.lastSequence == 5)
        #expect(page.events[0].data == ["n": 3])
        #expect(page.events[0].source == "users")
        await #expect(throws: ServiceError.self) { try await fixture.log.page(source: "users", query: EventsQuery(after: 0, limit: 0)) }
    }

    @Test(arguments: Backend.allCases)
    func aRolledBackChangeLeavesNoEventAndNoGap(backend: Backend) async throws {
        let fixture = try await outbox(backend)
        defer { fixture.close() }
        _ = try await fixture.append(1)
        await #expect(throws: Abort.self) { try await fixture.append([2, 3], fail: true) }
        #expect(try await fixture.append(4) == 2)
        #expect(
            try await fixture.log.page(source: "s", query: EventsQuery(after: 0, limit: 10)).events.map(\.data) == [["n": 1], ["n": 4]])
    }

    /// Many writers at once (several instances on PostgreSQL): every sequence once, none missing, in commit order.
    @Test(arguments: Backend.allCases)
    func concurrentWritersGetGapFreeSequences(backend: Backend) async throws {
        let fixture = try await outbox(backend)
        defer { fixture.close() }
        let sequences = try await withThrowingTaskGroup(of: [UInt64].self) { group in
            for writer in 0..<8 {
                group.addTask {
                    try await writingAgainWhileUnavailable { try await fixture.append(Array(writer * 10..<writer * 10 + 5), fail: false) }
                }
            }
            return try await group.reduce(into: []) { $0 += $1 }
        }
        // A write answered 503 at its deadline may have committed, and its retry then appends its
        // events again: at least 40 events, every sequence once, none missing, each writer's among them.
        let events = try await fixture.log.page(source: "s", query: EventsQuery(after: 0, limit: 100)).events
        #expect(events.count >= 40 && events.map(\.sequence) == Array(1...UInt64(events.count)))
        #expect(sequences.count == 40 && Set(sequences).count == 40 && Set(sequences).isSubset(of: Set(events.map(\.sequence))))
    }

    @Test(arguments: Backend.allCases)
    func theRelaySendsInOrderMarksWhatWasSentAndResendsAfterAFailedSend(backend: Backend) async throws {
        let fixture = try await outbox(backend)
        defer { fixture.close() }
        for n in 1...3 { _ = try await fixture.append(n) }
        struct SendFailed: Error {}
        await #expect(throws: SendFailed.self) { try await fixture.log.relayBatch(limit: 10) { _ in throw SendFailed() } }
        let sent = Mutex<[UInt64]>([])
        #expect(try await fixture.log.relayBatch(limit: 2) { batch in sent.withLock { $0 += batch.map(\.sequence) } } == .sent(2))
        #expect(try await fixture.log.relayBatch(limit: 10) { batch in sent.withLock { $0 += batch.map(\.sequence) } } == .sent(1))
        #expect(try await fixture.log.relayBatch(limit: 10) { batch in sent.withLock { $0 += batch.map(\.sequence) } } == .empty)
        #expect(sent.withLock { $0 } == [1, 2, 3], "each once, in order, the failed send's rows included")
        let envelope = try await fixture.log.page(source: "users", query: EventsQuery(after: 2, limit: 1)).events[0]
        #expect(envelope.sequence == 3)
    }

    /// On PostgreSQL one relay sends at a time: another instance's relay finds the lock taken.
    @Test func aSecondRelayStepsAsideWhileOneIsSending() async throws {
        let fixture = try await PostgresOutboxFixture.open()
        defer { fixture.close() }
        _ = try await fixture.append(1)
        let whileHeld = try await fixture.schema.write { connection in
            // What a sending relay holds, taken on this connection; the relay below uses another.
            try await connection.query("SELECT pg_advisory_xact_lock(hashtext('ride.relay.' || current_schema()))", logger: testLogger)
            return try await fixture.log.relayBatch(limit: 10) { _ in Issue.record("sent while another relay held the outbox") }
        }
        #expect(whileHeld == .busy)
        #expect(try await fixture.log.relayBatch(limit: 10) { _ in } == .sent(1), "sent once the lock is free")
    }
}
