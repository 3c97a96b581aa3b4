import Foundation
import PostgresNIO
import RideContract
import RideModels
import Storage

/// Drivers' documents and approval on PostgreSQL: the user's row locked for each change.
extension PostgresUserStore {
    public func setDocument(_ photo: StoredPhoto, userID: String, kind: DocumentKind, expiresOn: String, now: Date, reapprove: Bool)
        async throws -> User
    {
        let logger = logger
        return try await postgres.write { connection in
            guard let user = try await Self.user(connection, id: userID, lock: true, logger: logger) else {
                throw UserStoreFailure.unknownUser
            }
            guard user.role == .driver else { throw UserStoreFailure.notADriver }
            let at = UserRow.milliseconds(now)
            try await connection.run(
                """
                INSERT INTO driver_documents (user_id, kind, sha256, content_type, width, height, bytes)
                VALUES (\(userID), \(kind.rawValue), \(photo.sha256), \(photo.contentType), \(photo.width), \(photo.height), \(photo.bytes))
                ON CONFLICT (user_id, kind) DO UPDATE SET sha256 = excluded.sha256, content_type = excluded.content_type,
                    width = excluded.width, height = excluded.height, bytes = excluded.bytes
                """, logger: logger)
            try await connection.run(
                """
                UPDATE users SET \(unescaped: DocumentTable.expiresColumn(kind)) = \(expiresOn), \(unescaped: DocumentTable.uploadedColumn(kind)) = \(at),
                    updated_at_ms = \(at) WHERE id = \(userID)
                """, logger: logger)
            guard var updated = try await Self.user(connection, id: userID, lock: false, logger: logger) else {
                throw UserStoreFailure.unknownUser
            }
            if reapprove, updated.approvedAt == nil,
                DocumentTable.approvalFailure(updated, today: DriverApproval.day(now), requireDocuments: false) == nil
            {
                try await connection.run("UPDATE users SET approved_at_ms = \(at) WHERE id = \(userID)", logger: logger)
                updated.approvedAt = UserRow.date(at)
            }
            return updated
        }
    }

    public func document(userID: String, kind: DocumentKind) async throws -> StoredPhoto? {
        let logger = logger
        return try await postgres.read { connection in
            try await connection.first(
                "SELECT sha256, content_type, width, height, bytes FROM driver_documents WHERE user_id = \(userID) AND kind = \(kind.rawValue)",
                as: (String, String, Int, Int, Data).self, logger: logger
            ).map { StoredPhoto(sha256: $0.0, contentType: $0.1, width: $0.2, height: $0.3, bytes: $0.4) }
        }
    }

    public func approveDriver(userID: String, now: Date, requireDocuments: Bool) async throws -> User? {
        let logger = logger
        return try await postgres.write { connection in
            guard let user = try await Self.user(connection, id: userID, lock: true, logger: logger) else { return nil }
            if let failure = DocumentTable.approvalFailure(user, today: DriverApproval.day(now), requireDocuments: requireDocuments) {
                throw failure
            }
            try await connection.run(
                "UPDATE users SET approved_at_ms = COALESCE(approved_at_ms, \(UserRow.milliseconds(now))) WHERE id = \(userID)",
                logger: logger)
            return try await Self.user(connection, id: userID, lock: false, logger: logger)
        }
    }

    public func withdrawApproval(userID: String, reason: String, now: Date) async throws -> User? {
        let logger = logger
        return try await postgres.write { connection in
            guard let user = try await Self.user(connection, id: userID, lock: true, logger: logger) else { return nil }
            guard user.role == .driver else { throw UserStoreFailure.notADriver }
            guard user.approvedAt != nil else { return user }
            try await connection.run("UPDATE users SET approved_at_ms = NULL WHERE id = \(userID)", logger: logger)
            _ = try await PostgresOutbox.append(
                connection, Events.userApprovalLapsed,
                data: DriverApprovalLapsed(userID: user.id, deviceID: user.deviceID, reason: reason), time: now, logger: logger)
            return try await Self.user(connection, id: userID, lock: false, logger: logger)
        }
    }

    public func lapseApprovals(today: String, now: Date) async throws -> [DriverApprovalLapsed] {
        let logger = logger
        return try await postgres.write { connection in
            let users = try await connection.all(
                """
                SELECT \(unescaped: Self.userColumns) FROM users
                WHERE approved_at_ms IS NOT NULL AND (licence_expires_on < \(today) OR insurance_expires_on < \(today)) FOR UPDATE
                """, as: UserColumns.self, logger: logger
            ).map(Self.user)
            var lapses: [DriverApprovalLapsed] = []
            for user in users {
                try await connection.run("UPDATE users SET approved_at_ms = NULL WHERE id = \(user.id)", logger: logger)
                let lapsed = DriverApprovalLapsed(
                    userID: user.id, deviceID: user.deviceID, reason: DocumentTable.lapseReason(user, today: today))
                _ = try await PostgresOutbox.append(
                    connection, Events.userApprovalLapsed, data: lapsed, time: now,
                    logger: logger)
                lapses.append(lapsed)
            }
            return lapses
        }
    }
}
