import Foundation
import PostgresNIO
@testable import Storage
import Testing
import TestPostgres

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
            let thaw = Task { try await Task.sleep(for: .seconds(1)); try await server.freeze(false) }
            let slow = await PostgresSchema.probe(again.connection, configuration: configuration, within: .seconds(10), logger: testLogger)
            try await thaw.value
            #expect(slow.answered, "a server that answers late is reachable: \(slow.failure ?? "")")

            // Frozen past the deadline: unreachable when the deadline passes, not before and not much after.
            try await server.freeze(true)
            let start = ContinuousClock.now
            let silent = await PostgresSchema.probe(slow.connection, configuration: configuration, within: .seconds(2), logger: testLogger)
            let waited = ContinuousClock.now - start
            try await server.freeze(false)
            #expect(!silent.answered && silent.connection == nil && waited >= .seconds(2) && waited < .seconds(6), "\(waited): \(silent.failure ?? "")")

            // Stopped: its connection closed, and a new one refused — each told at once, with the reason.
            let held = await PostgresSchema.probe(nil, configuration: configuration, within: .seconds(10), logger: testLogger)
            try await server.stop()
            let closedAt = ContinuousClock.now
            let closed = await PostgresSchema.probe(held.connection, configuration: configuration, within: .seconds(10), logger: testLogger)
            #expect(held.answered && !closed.answered && ContinuousClock.now - closedAt < .seconds(5), "\(ContinuousClock.now - closedAt): \(closed.failure ?? "")")
            let refusedAt = ContinuousClock.now
            let down = await PostgresSchema.probe(nil, configuration: configuration, within: .seconds(10), logger: testLogger)
            #expect(!down.answered && ContinuousClock.now - refusedAt < .seconds(5) && down.failure != nil, "\(down.failure ?? "")")

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
}
