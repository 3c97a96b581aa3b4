import Foundation
import PostgresNIO
import Storage

/// The push outbox on PostgreSQL: claimed with `SKIP LOCKED`, as webhook deliveries are.
extension PostgresNotificationStore {
    public func claimDuePushes(now: Date, lease: Duration, limit: Int) async throws -> (pushes: [PendingPush], leaseEnd: Int64) {
        let (due, until) = try await claim(now: now, lease: lease, as: NotificationRows.PushColumns.self) { nowMS, until in
            """
            WITH due AS (
                SELECT id, next_attempt_ms AS due_ms FROM pushes
                WHERE status = 'pending' AND next_attempt_ms <= \(nowMS) AND \(unescaped: NotificationRows.firstOfItsToken)
                ORDER BY next_attempt_ms, id LIMIT \(limit) FOR UPDATE SKIP LOCKED
            ), claimed AS (
                UPDATE pushes SET next_attempt_ms = \(until) FROM due WHERE pushes.id = due.id RETURNING pushes.*, due.due_ms
            )
            SELECT \(unescaped: NotificationRows.pushColumns) FROM claimed ORDER BY due_ms, id
            """
        }
        return (try due.map(NotificationRows.push), until)
    }

    public func removePushToken(_ token: String, reason: String) async throws {
        let logger = logger
        try await postgres.write { connection in
            _ = try await connection.run("DELETE FROM push_tokens WHERE token = \(token)", logger: logger)
            _ = try await connection.run(
                "UPDATE pushes SET status = 'dead', last_error = \(reason) WHERE token = \(token) AND status = 'pending'", logger: logger)
        }
    }

    public func pushes(userID: String, limit: Int) async throws -> [PendingPush] {
        let logger = logger
        return try await postgres.read { connection in
            try await connection.all(
                "SELECT \(unescaped: NotificationRows.pushColumns) FROM pushes WHERE user_id = \(userID) ORDER BY id DESC LIMIT \(limit)",
                as: NotificationRows.PushColumns.self, logger: logger
            ).map(NotificationRows.push)
        }
    }
}
