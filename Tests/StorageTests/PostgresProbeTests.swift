import Bus
import Foundation
import PostgresNIO
import TestPostgres
import Testing

@testable import Storage

/// The probe that decides whether a service refuses requests (503 storage_unavailable) tells an
/// answer, a refusal and a silence apart — and a slow answer is not a silence.
@Suite(.serialized) struct PostgresProbeTests {
    @Test func theProbeTellsAnAnswerARefusalAndASilenceApart() async throws {
        let server = try await TestPostgresServer.start()  // its own: frozen and stopped here
        do {
            let configuration = try PostgresSchema.probeConfiguration(try await server.newDatabase())
            let up = await PostgresSchema.probe(nil, configuration: configuration, within: .seconds(10), logger: testLogger)
            #expect(up.answered && up.connection != nil, "\(up.failure ?? "")")
            let again = await PostgresSchema.probe(up.connection, configuration: configuration, within: .seconds(10), logger: testLogger)
            #expect(again.answered && again.connection === up.connection, "the probe keeps its connection")

            // Frozen for less than the deadline: slow, still answered.
            try await server.freeze(true)
            let thaw = Task {
                try await Task.sleep(for: .seconds(1))
                try await server.freeze(false)
            }
            let slow = await PostgresSchema.probe(again.connection, configuration: configuration, within: .seconds(10), logger: testLogger)
            try await thaw.value
            #expect(slow.answered, "a server that answers late is reachable: \(slow.failure ?? "")")

            // Frozen past the deadline: unreachable when the deadline passes, not before and not much after.
            try await server.freeze(true)
            let start = ContinuousClock.now
            let silent = await PostgresSchema.probe(slow.connection, configuration: configuration, within: .seconds(2), logger: testLogger)
            let waited = ContinuousClock.now - start
            try await server.freeze(false)
            #expect(
                !silent.answered && silent.connection == nil && waited >= .seconds(2) && waited < .seconds(12),
                "\(waited): \(silent.failure ?? "")")

            // Stopped: its connection closed, and a new one refused — each told at once, with the reason.
            let held = await PostgresSchema.probe(nil, configuration: configuration, within: .seconds(10), logger: testLogger)
            try await server.stop()
            let closedAt = ContinuousClock.now
            let closed = await PostgresSchema.probe(held.connection, configuration: configuration, within: .seconds(10), logger: testLogger)
            // Told at once: well inside the probes' 10-s deadline, with room for the suite's load.
            #expect(
                held.answered && !closed.answered && ContinuousClock.now - closedAt < .seconds(9),
                "\(ContinuousClock.now - closedAt): \(closed.failure ?? "")")
            let refusedAt = ContinuousClock.now
            let down = await PostgresSchema.probe(nil, configuration: configuration, within: .seconds(10), logger: testLogger)
            #expect(!down.answered && ContinuousClock.now - refusedAt < .seconds(9) && down.failure != nil, "\(down.failure ?? "")")

            try await server.startServer()
            let back = await PostgresSchema.probe(nil, configuration: configuration, within: .seconds(10), logger: testLogger)
            #expect(back.answered, "answered once the server is back: \(back.failure ?? "")")
            try? await back.connection?.close()
        } catch {
            try? await server.freeze(false)
            try? await server.stop()
            throw error
        }
        try await server.stop()
    }

    /// A read or write that gets no answer (the server frozen: the same silence as the query seen
    /// hanging for good after a restart) is answered 503 at the schema's call deadline, so a relay
    /// or a reactor goes on; once the server answers again, so does the schema.
    @Test func aCallWithoutAnswerIsRefusedAtTheDeadlineAndTheSchemaRecovers() async throws {
        let server = try await TestPostgresServer.start()  // its own: frozen here
        do {
            // Opened again after a refusal: under CI's load making the schema once missed the 2-s deadline.
            let url = try await server.newDatabase()
            let openBy = ContinuousClock.now + .seconds(60)
            var opened: PostgresSchema?
            while opened == nil {
                do {
                    opened = try await PostgresSchema.open(
                        url: url, schema: "deadline", migrations: [], outbox: false, callDeadline: .seconds(2), logger: testLogger)
                } catch let error as ServiceError where error.code == "storage_unavailable" && ContinuousClock.now < openBy {
                    try await Task.sleep(for: .milliseconds(200))
                }
            }
            let schema = try #require(opened)
            defer { schema.close() }
            // Answering first (a loaded machine may miss the 2-s deadline now and then).
            try await eventually(within: .seconds(30)) {
                (try? await schema.read { connection -> Int? in try await connection.first("SELECT 1", as: Int.self, logger: testLogger) })
                    == 1
            }

            try await server.freeze(true)
            let start = ContinuousClock.now
            var refusal: ServiceError?
            do {
                _ = try await schema.write { connection -> Int? in try await connection.first("SELECT 2", as: Int.self, logger: testLogger)
                }
            } catch let error as ServiceError {
                refusal = error
            }
            let waited = ContinuousClock.now - start
            try await server.freeze(false)
            #expect(
                refusal?.code == "storage_unavailable" && waited >= .seconds(2) && waited < .seconds(12),
                "\(waited): \(String(describing: refusal))")

            try await eventually(within: .seconds(20)) {
                let three = try? await schema.read { connection -> Int? in
                    try await connection.first("SELECT 3", as: Int.self, logger: testLogger)
                }
                return three == 3
            }
        } catch {
            try? await server.freeze(false)
            try? await server.stop()
            throw error
        }
        try await server.stop()
    }

    /// A transaction the server ends under its caller (idle longer than the 5 s every session
    /// allows: a starved process between two statements) is answered 503 when the connection
    /// closes, not at the call's deadline; the next call gets a new connection.
    @Test func aTransactionTheServerEndsIsAnsweredWhenItsConnectionCloses() async throws {
        let deadline = Duration.seconds(120)
        let schema = try await PostgresSchema.open(
            url: try await freshPostgres(), schema: "ended", migrations: [], outbox: false, callDeadline: deadline, logger: testLogger)
        defer { schema.close() }
        let start = ContinuousClock.now
        var refusal: ServiceError?
        do {
            try await schema.write { connection in
                try await connection.query("SELECT 1", logger: testLogger)
                try await Task.sleep(for: .seconds(7))
                try await connection.query("SELECT 2", logger: testLogger)
            }
        } catch let error as ServiceError {
            refusal = error
        }
        let waited = ContinuousClock.now - start
        #expect(refusal?.code == "storage_unavailable" && waited < deadline / 2, "\(waited): \(String(describing: refusal))")
        let three = try await schema.read { connection in try await connection.first("SELECT 3", as: Int.self, logger: testLogger) }
        #expect(three == 3)
    }

    /// Migrations run with a longer idle allowance than other transactions (a service starting on
    /// a loaded machine), and only they do.
    @Test func migrationsMayWaitLongerBetweenStatementsThanOtherTransactions() async throws {
        let migration: PostgresSchema.Migration = (
            "allowance", "CREATE TABLE allowance AS SELECT current_setting('idle_in_transaction_session_timeout') AS value"
        )
        let schema = try await PostgresSchema.open(
            url: try await freshPostgres(), schema: "allowance", migrations: [migration], outbox: false, logger: testLogger)
        defer { schema.close() }
        let during = try await schema.read { connection in
            try await connection.first("SELECT value FROM allowance", as: String.self, logger: testLogger)
        }
        let after = try await schema.write { connection in
            try await connection.first("SELECT current_setting('idle_in_transaction_session_timeout')", as: String.self, logger: testLogger)
        }
        #expect(during == "1min" && after == "5s", "in the migration \(during ?? "none"), after it \(after ?? "none")")
    }

    func eventually(within limit: Duration, _ condition: () async -> Bool) async throws {
        let deadline = ContinuousClock.now + limit
        while ContinuousClock.now < deadline {
            if await condition() { return }
            try await Task.sleep(for: .milliseconds(200))
        }
        Issue.record("not within \(limit)")
    }
}
