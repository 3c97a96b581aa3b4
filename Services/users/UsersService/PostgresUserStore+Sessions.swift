import Foundation
import PostgresNIO
import Storage

/// `PostgresUserStore`'s sessions (`SessionTable`).
extension PostgresUserStore {
    public func createSession(_ session: SessionRecord) async throws {
        let logger = logger
        try await postgres.write { connection in
            try await connection.run(
                "DELETE FROM sessions WHERE user_id = \(session.userID) AND expires_at_ms < \(UserRow.milliseconds(session.createdAt))",
                logger: logger)
            try await connection.run(
                """
                INSERT INTO sessions (id, user_id, refresh_hash, created_at_ms, expires_at_ms)
                VALUES (\(session.id), \(session.userID), \(session.refreshHash), \(UserRow.milliseconds(session.createdAt)), \(UserRow.milliseconds(session.expiresAt)))
                """, logger: logger)
        }
    }

    public func rotateSession(_ id: String, presentedHash: String, nextHash: String, now: Date, expiresAt: Date) async throws
        -> SessionRotation
    {
        let logger = logger
        return try await postgres.write { connection in
            // Locked: two instances given the same token at once rotate it once; the other sees reuse.
            guard
                let (userID, hash, previous, expires, revoked) = try await connection.first(
                    "SELECT user_id, refresh_hash, previous_refresh_hash, expires_at_ms, revoked_at_ms FROM sessions WHERE id = \(id) FOR UPDATE",
                    as: (String, String, String?, Int64, Int64?).self, logger: logger)
            else { return .unknown }
            if revoked != nil { return .revoked }
            guard hash == presentedHash else {
                guard previous == presentedHash else { return .forged }
                try await connection.run(
                    "UPDATE sessions SET revoked_at_ms = \(UserRow.milliseconds(now)) WHERE id = \(id)", logger: logger)
                return .reused
            }
            guard expires > UserRow.milliseconds(now) else { return .expired }
            try await connection.run(
                "UPDATE sessions SET refresh_hash = \(nextHash), previous_refresh_hash = \(presentedHash), expires_at_ms = \(UserRow.milliseconds(expiresAt)) WHERE id = \(id)",
                logger: logger)
            return .rotated(userID: userID)
        }
    }

    @discardableResult
    public func revokeSession(_ id: String, now: Date) async throws -> Bool {
        let logger = logger
        return try await postgres.write { connection in
            try await connection.run(
                "UPDATE sessions SET revoked_at_ms = \(UserRow.milliseconds(now)) WHERE id = \(id) AND revoked_at_ms IS NULL RETURNING 1",
                logger: logger) == 1
        }
    }

    public func sessionIsActive(_ id: String) async throws -> Bool {
        let logger = logger
        return try await postgres.read { connection in
            try await connection.first(
                "SELECT user_id FROM sessions WHERE id = \(id) AND revoked_at_ms IS NULL", as: String.self, logger: logger) != nil
        }
    }

    public func loggedIn(session id: String, user: String) async throws -> Date? {
        let logger = logger
        return try await postgres.read { connection in
            try await connection.first(
                "SELECT created_at_ms FROM sessions WHERE id = \(id) AND user_id = \(user) AND revoked_at_ms IS NULL", as: Int64.self,
                logger: logger
            ).map(UserRow.date)
        }
    }

    public func liveSessionUser(_ id: String, now: Date) async throws -> String? {
        let logger = logger
        return try await postgres.read { connection in
            try await connection.first(
                "SELECT user_id FROM sessions WHERE id = \(id) AND revoked_at_ms IS NULL AND expires_at_ms > \(UserRow.milliseconds(now))",
                as: String.self, logger: logger)
        }
    }
}
