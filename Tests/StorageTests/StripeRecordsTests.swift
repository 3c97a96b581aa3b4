import Foundation
import Logging
import Storage
import Testing

@testable import OrdersService

/// The Stripe adapter's records, the same on SQLite (`stripe.sqlite`) and PostgreSQL (schema
/// `stripe`): instances racing to remember one rider's customer keep the first id; a webhook event
/// is taken once; rides not charged are counted until charged.
@Suite struct StripeRecordsTests {
    func withRecords(_ backend: Backend, _ body: (any StripeRecords) async throws -> Void) async throws {
        let sqlite: (String) throws -> any StripeRecords = { try StripeIDs(path: $0) }
        let postgres: (PostgresURL) async throws -> any StripeRecords = { try await PostgresStripeIDs.open(url: $0, logger: testLogger) }
        try await withBackend(backend, sqlite: sqlite, postgres: postgres, body)
    }

    @Test(arguments: Backend.allCases)
    func theFirstIdStoredWinsEventsAreTakenOnceAndFailuresAreCounted(backend: Backend) async throws {
        try await withRecords(backend) { records in
            #expect(try await records.id(of: "rider:r1") == nil)
            let kept = try await withThrowingTaskGroup(of: String.self) { group in
                for n in 0..<4 { group.addTask { try await records.remember("cus_\(n)", for: "rider:r1") } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(Set(kept).count == 1, "one customer for every instance: \(kept)")
            #expect(try await records.id(of: "rider:r1") == kept.first)

            #expect(
                try await records.recordEvent(id: "evt_1", type: "account.updated", objectID: "acct_1", detail: "payouts_enabled=false"))
            #expect(
                try await !records.recordEvent(id: "evt_1", type: "account.updated", objectID: "acct_1", detail: "payouts_enabled=false"))
            try await Task.sleep(for: .milliseconds(5))
            #expect(try await records.recordEvent(id: "evt_2", type: "account.updated", objectID: "acct_1", detail: "payouts_enabled=true"))
            #expect(try await records.latestEvent(type: "account.updated", objectID: "acct_1") == "payouts_enabled=true")

            try await records.recordFailure(orderID: "o1", reason: "declined")
            try await records.recordFailure(orderID: "o1", reason: "declined again")
            try await records.recordFailure(orderID: "o2", reason: "declined")
            #expect(try await records.failureCount() == 2)
            try await records.clearFailure(orderID: "o1")
            #expect(try await records.failureCount() == 1)
        }
    }
}

extension PostgresStripeIDs: PostgresBacked {}
