import Foundation
import Logging
import PostgresNIO
import Storage

/// `StripeRecords` in PostgreSQL (schema `stripe`), when orders' state is there: every instance,
/// on whichever host, finds the same customer and account ids, takes a webhook event once and
/// counts the same rides not charged.
final class PostgresStripeIDs: StripeRecords, PostgresSchemaStore {
    public let postgres: PostgresSchema

    public static let defaultSchema = "stripe"
    public static let keepsOutbox = false
    public static let migrations = PostgresSchema.translated(StripeIDs.migrations)

    public init(postgres: PostgresSchema) {
        self.postgres = postgres
    }

    func id(of owner: String) async throws -> String? {
        let logger = logger
        return try await postgres.read { connection in
            try await connection.first("SELECT object_id FROM stripe_ids WHERE owner = \(owner)", as: String.self, logger: logger)
        }
    }

    func remember(_ id: String, for owner: String) async throws -> String {
        let logger = logger
        return try await postgres.write { connection in
            try await connection.run(
                "INSERT INTO stripe_ids (owner, object_id) VALUES (\(owner), \(id)) ON CONFLICT (owner) DO NOTHING", logger: logger)
            return try await connection.first("SELECT object_id FROM stripe_ids WHERE owner = \(owner)", as: String.self, logger: logger)
                ?? id
        }
    }

    func recordEvent(id: String, type: String, objectID: String, detail: String) async throws -> Bool {
        let logger = logger
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        return try await postgres.write { connection in
            try await connection.run(
                """
                INSERT INTO stripe_events (id, type, object_id, detail, received_at_ms) VALUES (\(id), \(type), \(objectID), \(detail), \(now))
                ON CONFLICT (id) DO NOTHING RETURNING 1
                """, logger: logger) == 1
        }
    }

    func latestEvent(type: String, objectID: String) async throws -> String? {
        let logger = logger
        return try await postgres.read { connection in
            try await connection.first(
                "SELECT detail FROM stripe_events WHERE type = \(type) AND object_id = \(objectID) ORDER BY received_at_ms DESC LIMIT 1",
                as: String.self,
                logger: logger)
        }
    }

    func recordFailure(orderID: String, reason: String) async throws {
        let logger = logger
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        try await postgres.write { connection in
            try await connection.run(
                """
                INSERT INTO failed_charges (order_id, reason, failed_at_ms) VALUES (\(orderID), \(reason), \(now))
                ON CONFLICT (order_id) DO UPDATE SET reason = excluded.reason, failed_at_ms = excluded.failed_at_ms
                """, logger: logger)
        }
    }

    func clearFailure(orderID: String) async throws {
        let logger = logger
        try await postgres.write { connection in
            try await connection.run("DELETE FROM failed_charges WHERE order_id = \(orderID)", logger: logger)
        }
    }

    func failureCount() async throws -> Int {
        let logger = logger
        return try await postgres.read { connection in
            try await connection.first("SELECT COUNT(*) FROM failed_charges", as: Int.self, logger: logger) ?? 0
        }
    }
}
