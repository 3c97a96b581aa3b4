import Bus
import Foundation
import Logging
import PostgresNIO
import RideContract
import RideModels
import Storage
import Synchronization
import Wire

/// Users in the `users` schema of a shared PostgreSQL database: what several `ride-users`
/// instances use together. Same tables and rules as `UserStore`; where SQLite's single writer made
/// a check-then-write safe, this store lets the database decide (a unique phone number conflict,
/// a row lock on the user whose places change).
public final class PostgresUserStore: UserStorage, PostgresServiceStore, PostgresReactorCursors {
    public let postgres: PostgresSchema
    private let counted = Mutex<(count: Int, at: ContinuousClock.Instant, refreshing: Bool)>((0, .now, false))

    public static let defaultSchema = "users"
    public static let keepsOutbox = true

    public init(postgres: PostgresSchema) {
        self.postgres = postgres
    }

    /// The count of users, which sign-up's limit reads.
    public func prepare() async throws {
        let count = try await countUsers()
        counted.withLock { $0 = (count, .now, false) }
    }

    /// The SQLite store's schema, translated.
    public static let migrations = PostgresSchema.translated(UserStore.migrations)

    /// The count as last read, read again (in the background) when older than 5 s: other
    /// instances register users too.
    public var count: Int {
        let (count, stale) = counted.withLock { state -> (Int, Bool) in
            let stale = !state.refreshing && ContinuousClock.now - state.at > .seconds(5)
            if stale { state.refreshing = true }
            return (state.count, stale)
        }
        if stale {
            Task {
                let fresh = try? await countUsers()
                counted.withLock { $0 = (fresh ?? $0.count, .now, false) }
            }
        }
        return count
    }

    /// Counts a user stored by another file's insert (`register(_:identity:)`).
    func noteRegistered() { counted.withLock { $0.count += 1 } }

    private func countUsers() async throws -> Int {
        try await postgres.read { [logger] in try await $0.first("SELECT COUNT(*) FROM users", as: Int.self, logger: logger) ?? 0 }
    }

    public func register(_ user: User, passwordHash: String) async throws -> UInt64 {
        let logger = logger
        let created = UserRow.milliseconds(user.createdAt)
        let sequence = try await Self.deviceConflict {
            try await postgres.write { connection in
                let inserted = try await connection.run(
                    """
                    INSERT INTO users (id, role, name, phone_number, device_id, car_model, car_license_plate, car_make, car_color, password_hash, created_at_ms, updated_at_ms)
                    VALUES (\(user.id), \(user.role.rawValue), \(user.name), \(user.phoneNumber), \(user.deviceID), \(user.car?.model),
                            \(user.car?.licensePlate), \(user.car?.make), \(user.car?.color), \(passwordHash), \(created), \(created))
                    ON CONFLICT (phone_number) DO NOTHING RETURNING 1
                    """, logger: logger)
                guard inserted == 1 else { throw UserStoreFailure.phoneTaken }
                return try await PostgresOutbox.append(
                    connection, Events.userRegistered,
                    data: UserRegistered(user: user), time: user.createdAt, logger: logger)
            }
        }
        noteRegistered()
        return sequence
    }

    static let userColumns =
        "id, role, name, phone_number, device_id, car_model, car_license_plate, created_at_ms, rating_sum, rating_count, cancel_count, photo_sha256, car_photo_sha256, car_make, car_color, suspended_at_ms, suspension_reason, licence_expires_on, licence_uploaded_at_ms, insurance_expires_on, insurance_uploaded_at_ms, approved_at_ms"
    typealias UserColumns = (
        String, String, String, String, String?, String?, String?, Int64, Int, Int, Int, String?, String?, String?, String?, Int64?,
        String?,
        String?, Int64?, String?, Int64?, Int64?
    )

    static func user(_ row: UserColumns) -> User {
        UserRow(
            id: row.0, role: row.1, name: row.2, phoneNumber: row.3, deviceID: row.4, carModel: row.5, carLicensePlate: row.6,
            carMake: row.13, carColor: row.14, createdAtMS: row.7, ratingSum: row.8, ratingCount: row.9, cancelCount: row.10,
            photoSHA256: row.11,
            carPhotoSHA256: row.12, suspendedAtMS: row.15, suspensionReason: row.16, licenceExpiresOn: row.17, licenceUploadedAtMS: row.18,
            insuranceExpiresOn: row.19, insuranceUploadedAtMS: row.20, approvedAtMS: row.21
        ).user
    }

    public func credentials(phoneNumber: String) async throws -> (User, String)? {
        let logger = logger
        return try await postgres.read { connection in
            try await connection.first(
                "SELECT \(unescaped: Self.userColumns), password_hash FROM users WHERE phone_number = \(phoneNumber)",
                as: (
                    String, String, String, String, String?, String?, String?, Int64, Int, Int, Int, String?, String?, String?, String?,
                    Int64?, String?,
                    String?, Int64?, String?, Int64?, Int64?, String
                ).self,
                logger: logger
            )
            .map { row in
                (
                    Self.user(
                        (
                            row.0, row.1, row.2, row.3, row.4, row.5, row.6, row.7, row.8, row.9, row.10, row.11, row.12, row.13, row.14,
                            row.15, row.16,
                            row.17, row.18, row.19, row.20, row.21
                        )), row.22
                )
            }
        }
    }

    public func user(id: String) async throws -> User? {
        let logger = logger
        return try await postgres.read { connection in try await Self.user(connection, id: id, lock: false, logger: logger) }
    }

    static func user(_ connection: PostgresConnection, id: String, lock: Bool, logger: Logger) async throws -> User? {
        try await connection.first(
            "SELECT \(unescaped: userColumns) FROM users WHERE id = \(id)\(unescaped: lock ? " FOR UPDATE" : "")",
            as: UserColumns.self, logger: logger
        ).map(user)
    }

    public func setSuspension(userID: String, reason: String?, now: Date) async throws -> User? {
        let logger = logger
        return try await postgres.write { connection in
            guard let before = try await Self.user(connection, id: userID, lock: true, logger: logger) else { return nil }
            // Suspended again (a retry): since the first time.
            let at: Int64? = reason == nil ? nil : UserRow.milliseconds(now)
            try await connection.run(
                """
                UPDATE users SET suspended_at_ms = CASE WHEN \(at)::BIGINT IS NULL THEN NULL ELSE COALESCE(suspended_at_ms, \(at)) END,
                    suspension_reason = \(reason) WHERE id = \(userID)
                """, logger: logger)
            if reason != nil {
                try await connection.run(
                    "UPDATE sessions SET revoked_at_ms = \(UserRow.milliseconds(now)) WHERE user_id = \(userID) AND revoked_at_ms IS NULL",
                    logger: logger)
            }
            let user = try await Self.user(connection, id: userID, lock: false, logger: logger)
            if before.suspendedAt == nil, let suspended = user.flatMap(UserSuspended.init) {
                _ = try await PostgresOutbox.append(
                    connection, Events.userSuspended, data: suspended, time: now,
                    logger: logger)
            }
            return user
        }
    }

    public func users(matching search: PeopleSearch) async throws -> [User] {
        let a = search.arguments
        var bindings = PostgresBindings()
        for value in [a.pattern, a.pattern, a.pattern, a.id, a.role, a.role] { bindings.append(value) }
        for _ in 0..<2 { bindings.append(a.suspended) }
        bindings.append(a.limit)
        // SQLite's `?` placeholders, numbered as PostgreSQL's.
        var number = 0
        let sql = PeopleSearch.sql(columns: Self.userColumns).map { character -> String in
            guard character == "?" else { return String(character) }
            number += 1
            return "$\(number)"
        }.joined()
        let (logger, query) = (logger, PostgresQuery(unsafeSQL: sql, binds: bindings))
        return try await postgres.read { connection in
            try await connection.all(query, as: UserColumns.self, logger: logger).map(Self.user)
        }
    }

    public func update(_ changes: UpdateUserParams, passwordHash: String?, now: Date) async throws -> User {
        let logger = logger
        do {
            return try await postgres.write { connection in
                guard var user = try await Self.user(connection, id: changes.id, lock: true, logger: logger) else {
                    throw UserStoreFailure.unknownUser
                }
                if let phone = changes.phoneNumber { user.phoneNumber = phone }
                if let name = changes.name { user.name = name }
                if let deviceID = changes.deviceID { user.deviceID = deviceID }
                // The car's photo is put_photo's to change.
                if var car = changes.car {
                    car.photoURL = user.car?.photoURL
                    user.car = car
                }
                try await connection.run(
                    """
                    UPDATE users SET name = \(user.name), phone_number = COALESCE(\(changes.phoneNumber), phone_number), device_id = \(user.deviceID),
                        car_model = \(user.car?.model), car_license_plate = \(user.car?.licensePlate), car_make = \(user.car?.make), car_color = \(user.car?.color),
                        password_hash = COALESCE(\(passwordHash), password_hash), updated_at_ms = \(UserRow.milliseconds(now))
                    WHERE id = \(user.id)
                    """, logger: logger)
                // A new password ends every session: whoever had the old one is logged out.
                if passwordHash != nil {
                    try await connection.run(
                        "UPDATE sessions SET revoked_at_ms = \(UserRow.milliseconds(now)) WHERE user_id = \(user.id) AND revoked_at_ms IS NULL",
                        logger: logger)
                }
                return user
            }
        } catch let error as PSQLError where error.serverInfo?[.sqlState] == "23505" {
            // The new number, or the new device, is someone else's.
            throw error.serverInfo?[.constraintName] == Self.deviceIndex ? UserStoreFailure.deviceTaken : UserStoreFailure.phoneTaken
        }
    }

    /// The unique index that gives a device to one account (`UserStore.migrations`).
    static let deviceIndex = "users_by_device"

    /// `body`, with a unique-device conflict (two accounts racing for one device) as `deviceTaken`.
    static func deviceConflict<T>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch let error as PSQLError where error.serverInfo?[.sqlState] == "23505" && error.serverInfo?[.constraintName] == deviceIndex {
            throw UserStoreFailure.deviceTaken
        }
    }

    public func record(_ rated: OrderRated) async throws -> Bool {
        let logger = logger
        return try await postgres.write { connection in
            let inserted = try await connection.run(
                """
                INSERT INTO ratings (order_id, rater_role, ratee_id, stars) VALUES (\(rated.orderID), \(rated.raterRole.rawValue), \(rated.rateeID), \(rated.rating.stars))
                ON CONFLICT DO NOTHING RETURNING 1
                """, logger: logger)
            guard inserted == 1 else { return false }
            try await connection.run(
                "UPDATE users SET rating_sum = rating_sum + \(rated.rating.stars), rating_count = rating_count + 1 WHERE id = \(rated.rateeID)",
                logger: logger)
            return true
        }
    }

    public func record(_ cancelled: DriverCancelled) async throws -> Bool {
        let logger = logger
        return try await postgres.write { connection in
            let inserted = try await connection.run(
                """
                INSERT INTO driver_cancels (order_id, redispatch, driver_id) VALUES (\(cancelled.orderID), \(cancelled.redispatch), \(cancelled.driverID))
                ON CONFLICT DO NOTHING RETURNING 1
                """, logger: logger)
            guard inserted == 1 else { return false }
            try await connection.run("UPDATE users SET cancel_count = cancel_count + 1 WHERE id = \(cancelled.driverID)", logger: logger)
            return true
        }
    }

    public func save(_ place: SavedPlace) async throws -> SavedPlace {
        let logger = logger
        return try await postgres.write { connection in
            // The user's row locked: two instances saving the same user's home queue here.
            guard try await Self.user(connection, id: place.userID, lock: true, logger: logger) != nil else {
                throw UserStoreFailure.unknownUser
            }
            var place = place
            if place.label != .other,
                let existing = try await connection.first(
                    "SELECT id FROM saved_places WHERE user_id = \(place.userID) AND label = \(place.label.rawValue)", as: String.self,
                    logger: logger)
            {
                place.id = existing
                try await connection.run(
                    "UPDATE saved_places SET document = \(try JSONCoding.encodeText(place)) WHERE id = \(existing)", logger: logger)
                return place
            }
            let count =
                try await connection.first(
                    "SELECT COUNT(*) FROM saved_places WHERE user_id = \(place.userID)", as: Int.self, logger: logger) ?? 0
            guard count < UserStorageRules.placesPerUser else { throw UserStoreFailure.tooManyPlaces(count) }
            try await connection.run(
                """
                INSERT INTO saved_places (id, user_id, label, document, created_at_ms)
                VALUES (\(place.id), \(place.userID), \(place.label.rawValue), \(try JSONCoding.encodeText(place)), \(UserRow.milliseconds(place.createdAt)))
                """, logger: logger)
            return place
        }
    }

    public func places(userID: String) async throws -> [SavedPlace] {
        let logger = logger
        return try await postgres.read { connection in
            try await connection.all(
                "SELECT document FROM saved_places WHERE user_id = \(userID) ORDER BY created_at_ms, id", as: String.self, logger: logger
            )
            .map { try JSONCoding.decode(SavedPlace.self, fromText: $0) }
        }
    }

    public func deletePlace(userID: String, id: String) async throws {
        let logger = logger
        try await postgres.write { connection in
            let deleted = try await connection.run(
                "DELETE FROM saved_places WHERE id = \(id) AND user_id = \(userID) RETURNING 1", logger: logger)
            if deleted == 0 { throw UserStoreFailure.unknownPlace }
        }
    }

    public func setPhoto(_ photo: StoredPhoto, userID: String, kind: PhotoKind, now: Date, keepReplaced: TimeInterval) async throws -> User
    {
        let logger = logger
        return try await postgres.write { connection in
            guard let user = try await Self.user(connection, id: userID, lock: true, logger: logger) else {
                throw UserStoreFailure.unknownUser
            }
            if kind == .car, user.car == nil { throw UserStoreFailure.noCar }
            let at = UserRow.milliseconds(now)
            let replaced =
                try await connection.first(
                    "SELECT \(unescaped: PhotoTable.column(kind)) FROM users WHERE id = \(userID)", as: String?.self, logger: logger) ?? nil
            // DO UPDATE, not DO NOTHING: it locks the row, so a sweep deleting it waits for this
            // transaction and then sees it pointed at again.
            try await connection.run(
                """
                INSERT INTO photos (sha256, content_type, width, height, bytes, created_at_ms)
                VALUES (\(photo.sha256), \(photo.contentType), \(photo.width), \(photo.height), \(photo.bytes), \(at))
                ON CONFLICT (sha256) DO UPDATE SET replaced_at_ms = NULL
                """, logger: logger)
            try await connection.run(
                "UPDATE users SET \(unescaped: PhotoTable.column(kind)) = \(photo.sha256), updated_at_ms = \(at) WHERE id = \(userID)",
                logger: logger)
            if let replaced, replaced != photo.sha256 {
                try await connection.run(
                    "UPDATE photos SET replaced_at_ms = \(at) WHERE sha256 = \(replaced) AND \(unescaped: PhotoTable.unreferenced)",
                    logger: logger)
            }
            try await connection.run(
                """
                DELETE FROM photos WHERE replaced_at_ms IS NOT NULL AND replaced_at_ms <= \(at - Int64(keepReplaced * 1000))
                AND \(unescaped: PhotoTable.unreferenced)
                """, logger: logger)
            guard let updated = try await Self.user(connection, id: userID, lock: false, logger: logger) else {
                throw UserStoreFailure.unknownUser
            }
            return updated
        }
    }

    public func photo(sha256: String) async throws -> StoredPhoto? {
        let logger = logger
        return try await postgres.read { connection in
            try await connection.first(
                "SELECT sha256, content_type, width, height, bytes FROM photos WHERE sha256 = \(sha256)",
                as: (String, String, Int, Int, Data).self, logger: logger
            ).map { StoredPhoto(sha256: $0.0, contentType: $0.1, width: $0.2, height: $0.3, bytes: $0.4) }
        }
    }
}
