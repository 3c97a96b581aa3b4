import Foundation
import Logging
import PostgresNIO
import RideContract
import RideModels
import Storage

/// `PostgresUserStore`'s identities (`IdentityTable`). The primary key decides races: two
/// instances signing the same new identity in at once store one account; the other is told `identityTaken`.
extension PostgresUserStore {
    public func user(identity provider: IdentityProvider, subject: String) async throws -> User? {
        let logger = logger
        let columns = Self.userColumns.split(separator: ",").map { "users." + $0.trimmingCharacters(in: .whitespaces) }.joined(
            separator: ", ")
        return try await postgres.read { connection in
            try await connection.first(
                """
                SELECT \(unescaped: columns) FROM identities JOIN users ON users.id = identities.user_id
                WHERE provider = \(provider.rawValue) AND subject = \(subject)
                """, as: UserColumns.self, logger: logger
            ).map(Self.user)
        }
    }

    public func register(_ user: User, identity: LinkedIdentity) async throws {
        let logger = logger
        let created = UserRow.milliseconds(user.createdAt)
        try await Self.deviceConflict {
            try await postgres.write { connection in
                guard try await Self.insert(connection, identity, logger: logger) else { throw UserStoreFailure.identityTaken }
                try await connection.run(
                    """
                    INSERT INTO users (id, role, name, phone_number, device_id, car_model, car_license_plate, password_hash, created_at_ms, updated_at_ms)
                    VALUES (\(user.id), \(user.role.rawValue), \(user.name), \(IdentityTable.placeholderPhone(identity)), \(user.deviceID), \(user.car?.model),
                            \(user.car?.licensePlate), \(IdentityTable.noPassword), \(created), \(created))
                    """, logger: logger)
                _ = try await PostgresOutbox.append(
                    connection, Events.userRegistered,
                    data: UserRegistered(user: user), time: user.createdAt, logger: logger)
            }
        }
        noteRegistered()
    }

    public func link(_ identity: LinkedIdentity) async throws -> LinkedIdentity {
        let logger = logger
        return try await postgres.write { connection in
            // As the SQLite store decides: a link stored before first, then the user.
            if let existing = try await Self.linked(connection, identity, logger: logger) { return try Self.same(existing, identity) }
            guard
                try await connection.first("SELECT id FROM users WHERE id = \(identity.userID) FOR UPDATE", as: String.self, logger: logger)
                    != nil
            else { throw UserStoreFailure.unknownUser }
            if try await Self.insert(connection, identity, logger: logger) { return identity }
            // Linked by another instance meanwhile.
            guard let existing = try await Self.linked(connection, identity, logger: logger) else { throw UserStoreFailure.identityTaken }
            return try Self.same(existing, identity)
        }
    }

    private static func linked(_ connection: PostgresConnection, _ identity: LinkedIdentity, logger: Logger) async throws -> LinkedIdentity?
    {
        try await connection.first(
            "SELECT user_id, created_at_ms FROM identities WHERE provider = \(identity.provider.rawValue) AND subject = \(identity.subject)",
            as: (String, Int64).self, logger: logger
        ).map { userID, createdAt in
            LinkedIdentity(provider: identity.provider, subject: identity.subject, userID: userID, createdAt: UserRow.date(createdAt))
        }
    }

    /// The link stored, when it is the asked user's.
    private static func same(_ existing: LinkedIdentity, _ asked: LinkedIdentity) throws -> LinkedIdentity {
        guard existing.userID == asked.userID else { throw UserStoreFailure.identityTaken }
        return existing
    }

    /// False when the identity was stored before.
    private static func insert(_ connection: PostgresConnection, _ identity: LinkedIdentity, logger: Logger) async throws -> Bool {
        try await connection.run(
            """
            INSERT INTO identities (provider, subject, user_id, created_at_ms)
            VALUES (\(identity.provider.rawValue), \(identity.subject), \(identity.userID), \(UserRow.milliseconds(identity.createdAt)))
            ON CONFLICT DO NOTHING RETURNING 1
            """, logger: logger) == 1
    }
}
