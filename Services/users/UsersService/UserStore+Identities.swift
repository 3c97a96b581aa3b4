import Foundation
import GRDB
import RideContract
import RideModels
import Storage

/// `UserStore`'s identities (`IdentityTable`).
extension UserStore {
    public func user(identity provider: IdentityProvider, subject: String) async throws -> User? {
        try await database.read { db in
            try Row.fetchOne(
                db.cachedStatement(
                    sql: "SELECT users.* FROM identities JOIN users ON users.id = identities.user_id WHERE provider = ? AND subject = ?"),
                arguments: [provider.rawValue, subject]
            ).map(Self.user)
        }
    }

    public func register(_ user: User, identity: LinkedIdentity) async throws {
        try await database.tracedWrite { db in
            if try Self.linkedUser(db, identity) != nil { throw UserStoreFailure.identityTaken }
            if let deviceID = user.deviceID, try Self.idForDevice(db, deviceID) != nil { throw UserStoreFailure.deviceTaken }
            let created = UserRow.milliseconds(user.createdAt)
            try db.run(
                """
                INSERT INTO users (id, role, name, phone_number, device_id, car_model, car_license_plate, password_hash, created_at_ms, updated_at_ms)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """,
                [
                    user.id, user.role.rawValue, user.name, IdentityTable.placeholderPhone(identity), user.deviceID, user.car?.model,
                    user.car?.licensePlate,
                    IdentityTable.noPassword, created, created,
                ])
            try Self.insert(db, identity)
            _ = try Outbox.append(
                db, Events.userRegistered, data: UserRegistered(user: user),
                time: user.createdAt)
        }
        noteRegistered()
    }

    public func link(_ identity: LinkedIdentity) async throws -> LinkedIdentity {
        try await database.write { db in
            if let existing = try Self.linkedUser(db, identity) {
                guard existing.userID == identity.userID else { throw UserStoreFailure.identityTaken }
                return existing
            }
            guard try db.value(String.self, "SELECT id FROM users WHERE id = ?", [identity.userID]) != nil else {
                throw UserStoreFailure.unknownUser
            }
            try Self.insert(db, identity)
            return identity
        }
    }

    private static func linkedUser(_ db: Database, _ identity: LinkedIdentity) throws -> LinkedIdentity? {
        try Row.fetchOne(
            db, sql: "SELECT user_id, created_at_ms FROM identities WHERE provider = ? AND subject = ?",
            arguments: [identity.provider.rawValue, identity.subject]
        ).map { row in
            LinkedIdentity(
                provider: identity.provider, subject: identity.subject, userID: row["user_id"],
                createdAt: UserRow.date(row["created_at_ms"]))
        }
    }

    private static func insert(_ db: Database, _ identity: LinkedIdentity) throws {
        try db.run(
            "INSERT INTO identities (provider, subject, user_id, created_at_ms) VALUES (?, ?, ?, ?)",
            [identity.provider.rawValue, identity.subject, identity.userID, UserRow.milliseconds(identity.createdAt)])
    }
}
