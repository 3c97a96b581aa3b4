import Foundation
import GRDB
import RideContract
import RideModels
import Storage

/// Drivers' documents and approval on SQLite.
extension UserStore {
    public func setDocument(_ photo: StoredPhoto, userID: String, kind: DocumentKind, expiresOn: String, now: Date, reapprove: Bool)
        async throws -> User
    {
        try await database.write { db in
            guard let user = try Self.user(db, id: userID) else { throw UserStoreFailure.unknownUser }
            guard user.role == .driver else { throw UserStoreFailure.notADriver }
            let at = UserRow.milliseconds(now)
            try db.run(
                """
                INSERT INTO driver_documents (user_id, kind, sha256, content_type, width, height, bytes) VALUES (?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT (user_id, kind) DO UPDATE SET sha256 = excluded.sha256, content_type = excluded.content_type,
                    width = excluded.width, height = excluded.height, bytes = excluded.bytes
                """, [userID, kind.rawValue, photo.sha256, photo.contentType, photo.width, photo.height, photo.bytes])
            try db.run(
                "UPDATE users SET \(DocumentTable.expiresColumn(kind)) = ?, \(DocumentTable.uploadedColumn(kind)) = ?, updated_at_ms = ? WHERE id = ?",
                [expiresOn, at, at, userID])
            guard var updated = try Self.user(db, id: userID) else { throw UserStoreFailure.unknownUser }
            if reapprove, updated.approvedAt == nil,
                DocumentTable.approvalFailure(updated, today: DriverApproval.day(now), requireDocuments: false) == nil
            {
                try db.run("UPDATE users SET approved_at_ms = ? WHERE id = ?", [at, userID])
                updated.approvedAt = UserRow.date(at)
            }
            return updated
        }
    }

    public func document(userID: String, kind: DocumentKind) async throws -> StoredPhoto? {
        try await database.read { db in
            try Row.fetchOne(db, sql: "SELECT * FROM driver_documents WHERE user_id = ? AND kind = ?", arguments: [userID, kind.rawValue])
                .map {
                    StoredPhoto(
                        sha256: $0["sha256"], contentType: $0["content_type"], width: $0["width"], height: $0["height"], bytes: $0["bytes"])
                }
        }
    }

    public func approveDriver(userID: String, now: Date, requireDocuments: Bool) async throws -> User? {
        try await database.write { db in
            guard let user = try Self.user(db, id: userID) else { return nil }
            if let failure = DocumentTable.approvalFailure(user, today: DriverApproval.day(now), requireDocuments: requireDocuments) {
                throw failure
            }
            try db.run("UPDATE users SET approved_at_ms = COALESCE(approved_at_ms, ?) WHERE id = ?", [UserRow.milliseconds(now), userID])
            return try Self.user(db, id: userID)
        }
    }

    public func withdrawApproval(userID: String, reason: String, now: Date) async throws -> User? {
        try await database.write { db in
            guard let user = try Self.user(db, id: userID) else { return nil }
            guard user.role == .driver else { throw UserStoreFailure.notADriver }
            guard user.approvedAt != nil else { return user }
            try db.run("UPDATE users SET approved_at_ms = NULL WHERE id = ?", [userID])
            let lapsed = DriverApprovalLapsed(userID: user.id, deviceID: user.deviceID, reason: reason)
            _ = try Outbox.append(db, Events.userApprovalLapsed, data: lapsed, time: now)
            return try Self.user(db, id: userID)
        }
    }

    public func lapseApprovals(today: String, now: Date) async throws -> [DriverApprovalLapsed] {
        try await database.write { db in
            let users = try Row.fetchAll(db, sql: "SELECT * FROM users WHERE \(DocumentTable.lapsingSQL)", arguments: [today, today]).map(
                Self.user)
            return try users.map { user in
                try db.run("UPDATE users SET approved_at_ms = NULL WHERE id = ?", [user.id])
                let lapsed = DriverApprovalLapsed(
                    userID: user.id, deviceID: user.deviceID, reason: DocumentTable.lapseReason(user, today: today))
                _ = try Outbox.append(
                    db, Events.userApprovalLapsed, data: lapsed, time: now)
                return lapsed
            }
        }
    }

    static func user(_ db: Database, id: String) throws -> User? {
        try Row.fetchOne(db.cachedStatement(sql: "SELECT * FROM users WHERE id = ?"), arguments: [id]).map(Self.user)
    }
}
