import Foundation
import GRDB
import Storage

/// The push outbox on SQLite: claimed, finished and read as webhook deliveries are.
extension NotificationStore {
    public func claimDuePushes(now: Date, lease: Duration, limit: Int) async throws -> (pushes: [PendingPush], leaseEnd: Int64) {
        try await database.write { db in
            let due = try Self.pushes(
                db,
                sql:
                    "SELECT \(NotificationRows.pushColumns) FROM pushes WHERE status = 'pending' AND next_attempt_ms <= ? AND \(NotificationRows.firstOfItsToken) ORDER BY next_attempt_ms, id LIMIT ?",
                arguments: [NotificationRows.milliseconds(now), limit])
            let until = NotificationRows.milliseconds(now) + Int64(lease.milliseconds)
            for push in due { try db.run("UPDATE pushes SET next_attempt_ms = ? WHERE id = ?", [until, push.id]) }
            return (due, until)
        }
    }

    public func removePushToken(_ token: String, reason: String) async throws {
        try await database.write { db in
            try db.run("DELETE FROM push_tokens WHERE token = ?", [token])
            try db.run("UPDATE pushes SET status = 'dead', last_error = ? WHERE token = ? AND status = 'pending'", [reason, token])
        }
    }

    public func pushes(userID: String, limit: Int) async throws -> [PendingPush] {
        try await database.read { db in
            try Self.pushes(
                db, sql: "SELECT \(NotificationRows.pushColumns) FROM pushes WHERE user_id = ? ORDER BY id DESC LIMIT ?",
                arguments: [userID, limit])
        }
    }

    private static func pushes(_ db: Database, sql: String, arguments: StatementArguments) throws -> [PendingPush] {
        try Row.fetchAll(db.cachedStatement(sql: sql), arguments: arguments).map { row in
            try NotificationRows.push((row[0], row[1], row[2], row[3], row[4], row[5], row[6]))
        }
    }
}
