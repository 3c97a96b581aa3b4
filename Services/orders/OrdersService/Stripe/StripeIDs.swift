import Foundation
import GRDB
import Storage

/// What the Stripe adapter keeps beside the orders: which Stripe object stands for which rider (a
/// Customer) or driver (a Connect Account), the webhook events taken, and the rides not charged.
/// Stripe keeps an idempotency key 24 hours only, so the ids must be kept here; two instances
/// creating one rider's customer at once send the same key and get the same customer, and the
/// first id stored wins. In `stripe.sqlite` (`StripeIDs`) or PostgreSQL's schema `stripe`
/// (`PostgresStripeIDs`), wherever the orders are.
protocol StripeRecords: Sendable {
    /// The id stored for `owner` (`rider:<id>`, `driver:<id>`).
    func id(of owner: String) async throws -> String?
    /// Stores `id` for `owner` unless one is stored already; the stored one.
    func remember(_ id: String, for owner: String) async throws -> String
    /// Records a webhook event once; false when it was taken before.
    func recordEvent(id: String, type: String, objectID: String, detail: String) async throws -> Bool
    /// The detail of the latest event of `type` about `objectID` (e.g. an account's payouts state).
    func latestEvent(type: String, objectID: String) async throws -> String?
    func recordFailure(orderID: String, reason: String) async throws
    func clearFailure(orderID: String) async throws
    func failureCount() async throws -> Int
}

/// `StripeRecords` in `stripe.sqlite` beside the orders' data.
final class StripeIDs: StripeRecords {
    let database: DatabasePool

    init(path: String) throws {
        database = try ServiceDatabase.open(path: path, migrations: Self.migrations, outbox: false)
    }

    static let migrations: [ServiceDatabase.Migration] = [
        ("v1", "CREATE TABLE stripe_ids (owner TEXT PRIMARY KEY NOT NULL, object_id TEXT NOT NULL);"),
        // Webhook events taken, by Stripe's event id: Stripe delivers an event again until it is answered 2xx.
        (
            "v2",
            "CREATE TABLE stripe_events (id TEXT PRIMARY KEY NOT NULL, type TEXT NOT NULL, object_id TEXT NOT NULL, detail TEXT NOT NULL, received_at_ms INTEGER NOT NULL);"
        ),
        // Rides that could not be charged, and why (the latest attempt's reason).
        ("v3", "CREATE TABLE failed_charges (order_id TEXT PRIMARY KEY NOT NULL, reason TEXT NOT NULL, failed_at_ms INTEGER NOT NULL);"),
    ]

    func id(of owner: String) async throws -> String? {
        try await database.read { db in try db.value(String.self, "SELECT object_id FROM stripe_ids WHERE owner = ?", [owner]) }
    }

    func remember(_ id: String, for owner: String) async throws -> String {
        try await database.write { db in
            try db.run("INSERT OR IGNORE INTO stripe_ids (owner, object_id) VALUES (?, ?)", [owner, id])
            return try db.value(String.self, "SELECT object_id FROM stripe_ids WHERE owner = ?", [owner]) ?? id
        }
    }

    func recordEvent(id: String, type: String, objectID: String, detail: String) async throws -> Bool {
        try await database.write { db in
            try db.run(
                "INSERT OR IGNORE INTO stripe_events (id, type, object_id, detail, received_at_ms) VALUES (?, ?, ?, ?, ?)",
                [id, type, objectID, detail, Int64(Date().timeIntervalSince1970 * 1000)])
            return db.changesCount > 0
        }
    }

    func latestEvent(type: String, objectID: String) async throws -> String? {
        try await database.read { db in
            try db.value(
                String.self, "SELECT detail FROM stripe_events WHERE type = ? AND object_id = ? ORDER BY received_at_ms DESC LIMIT 1",
                [type, objectID])
        }
    }

    func recordFailure(orderID: String, reason: String) async throws {
        try await database.write { db in
            try db.run(
                "INSERT INTO failed_charges (order_id, reason, failed_at_ms) VALUES (?, ?, ?) ON CONFLICT (order_id) DO UPDATE SET reason = excluded.reason, failed_at_ms = excluded.failed_at_ms",
                [orderID, reason, Int64(Date().timeIntervalSince1970 * 1000)])
        }
    }

    func clearFailure(orderID: String) async throws {
        try await database.write { db in try db.run("DELETE FROM failed_charges WHERE order_id = ?", [orderID]) }
    }

    func failureCount() async throws -> Int {
        try await database.read { db in try db.value(Int.self, "SELECT COUNT(*) FROM failed_charges") ?? 0 }
    }
}
