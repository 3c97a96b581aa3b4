import Foundation
import GRDB
import Storage

/// `UserStore`'s sessions (`SessionTable`).
extension UserStore {
    public func createSession(_ session: SessionRecord) async throws {
        try await database.write { db in
            try db.run(
                "DELETE FROM sessions WHERE user_id = ? AND expires_at_ms < ?", [session.userID, UserRow.milliseconds(session.createdAt)])
            try db.run(
                "INSERT INTO sessions (id, user_id, refresh_hash, created_at_ms, expires_at_ms) VALUES (?, ?, ?, ?, ?)",
                [
                    session.id, session.userID, session.refreshHash, UserRow.milliseconds(session.createdAt),
                    UserRow.milliseconds(session.expiresAt),
                ])
        }
    }

    public func rotateSession(_ id: String, presentedHash: String, nextHash: String, now: Date, expiresAt: Date) async throws
        -> SessionRotation
    {
        try await database.write { db in
            guard
                let row = try Row.fetchOne(
                    db, sql: "SELECT user_id, refresh_hash, previous_refresh_hash, expires_at_ms, revoked_at_ms FROM sessions WHERE id = ?",
                    arguments: [id])
            else {
                return .unknown
            }
            let revokedAt: Int64? = row["revoked_at_ms"]
            if revokedAt != nil { return .revoked }
            guard row["refresh_hash"] as String == presentedHash else {
                guard row["previous_refresh_hash"] as String? == presentedHash else { return .forged }
                try db.run("UPDATE sessions SET revoked_at_ms = ? WHERE id = ?", [UserRow.milliseconds(now), id])
                return .reused
            }
            guard row["expires_at_ms"] as Int64 > UserRow.milliseconds(now) else { return .expired }
            try db.run(
                "UPDATE sessions SET refresh_hash = ?, previous_refresh_hash = ?, expires_at_ms = ? WHERE id = ?",
                [nextHash, presentedHash, UserRow.milliseconds(expiresAt), id])
            return .rotated(userID: row["user_id"])
        }
    }

    @discardableResult
    public func revokeSession(_ id: String, now: Date) async throws -> Bool {
        try await database.write { db in
            try db.run("UPDATE sessions SET revoked_at_ms = ? WHERE id = ? AND revoked_at_ms IS NULL", [UserRow.milliseconds(now), id])
            return db.changesCount == 1
        }
    }

    public func sessionIsActive(_ id: String) async throws -> Bool {
        try await database.read { db in
            try Int.fetchOne(db.cachedStatement(sql: "SELECT 1 FROM sessions WHERE id = ? AND revoked_at_ms IS NULL"), arguments: [id])
                != nil
        }
    }

    public func loggedIn(session id: String, user: String) async throws -> Date? {
        try await database.read { db in
            try Int64.fetchOne(
                db.cachedStatement(sql: "SELECT created_at_ms FROM sessions WHERE id = ? AND user_id = ? AND revoked_at_ms IS NULL"),
                arguments: [id, user]
            ).map(UserRow.date)
        }
    }

    public func liveSessionUser(_ id: String, now: Date) async throws -> String? {
        try await database.read { db in
            try String.fetchOne(
                db.cachedStatement(sql: "SELECT user_id FROM sessions WHERE id = ? AND revoked_at_ms IS NULL AND expires_at_ms > ?"),
                arguments: [id, UserRow.milliseconds(now)])
        }
    }
}
