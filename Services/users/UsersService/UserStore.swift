import Bus
import Foundation
import GRDB
import RideContract
import RideModels
import Storage
import Synchronization
import Wire

/// Users in one SQLite file, with the outbox of `user.*` events in the same database.
public final class UserStore: UserStorage, SQLiteServiceStore, DatabaseReactorCursors {
    public let database: DatabasePool
    /// Users stored, kept in memory so /health and /metrics never query the database.
    private let storedCount = Atomic<Int>(0)

    public init(path: String) throws {
        database = try ServiceDatabase.open(path: path, migrations: Self.migrations, outbox: true)
        storedCount.store(try database.read { db in try db.value(Int.self, "SELECT COUNT(*) FROM users") ?? 0 }, ordering: .relaxed)
    }

    public var count: Int { storedCount.load(ordering: .relaxed) }

    /// Counts a user stored by another file's insert (`register(_:identity:)`).
    func noteRegistered() { storedCount.add(1, ordering: .relaxed) }

    /// The schema, one migration per version (the outbox table comes with the first).
    static let migrations: [ServiceDatabase.Migration] = [
        (
            "v1",
            """
            CREATE TABLE users (
                id TEXT PRIMARY KEY NOT NULL,
                role TEXT NOT NULL,
                name TEXT NOT NULL,
                phone_number TEXT NOT NULL UNIQUE,
                device_id TEXT,
                car_model TEXT,
                car_license_plate TEXT,
                password_hash TEXT NOT NULL,
                created_at_ms INTEGER NOT NULL,
                updated_at_ms INTEGER NOT NULL
            );
            """
        ),
        (
            "v2",
            """
            -- Ratings others gave each user (from orders' order.rated events): one per order and
            -- side, so a replayed event counts once; the sums keep the profile's average cheap.
            ALTER TABLE users ADD COLUMN rating_sum INTEGER NOT NULL DEFAULT 0;
            ALTER TABLE users ADD COLUMN rating_count INTEGER NOT NULL DEFAULT 0;
            CREATE TABLE ratings (
                order_id TEXT NOT NULL,
                rater_role TEXT NOT NULL,
                ratee_id TEXT NOT NULL,
                stars INTEGER NOT NULL,
                PRIMARY KEY (order_id, rater_role)
            ) WITHOUT ROWID;
            CREATE TABLE saved_places (
                id TEXT PRIMARY KEY NOT NULL,
                user_id TEXT NOT NULL,
                label TEXT NOT NULL,
                document TEXT NOT NULL,
                created_at_ms INTEGER NOT NULL
            );
            CREATE INDEX saved_places_by_user ON saved_places (user_id, created_at_ms);
            """ + ReactorCursorTable.sql
        ),
        (
            "v3",
            """
            -- A device belongs to one account. Accounts that shared one before keep it with the
            -- first to register it; the others lose it (their driver sets one again).
            UPDATE users SET device_id = NULL WHERE device_id IS NOT NULL AND EXISTS (
                SELECT 1 FROM users AS earlier WHERE earlier.device_id = users.device_id
                    AND (earlier.created_at_ms < users.created_at_ms OR (earlier.created_at_ms = users.created_at_ms AND earlier.id < users.id)));
            CREATE UNIQUE INDEX users_by_device ON users (device_id) WHERE device_id IS NOT NULL;
            """
        ),
        (
            "v4",
            """
            -- Rides a driver accepted and then cancelled before the ride (orders'
            -- order.driver_cancelled): one per order and time, so a replayed event counts once.
            ALTER TABLE users ADD COLUMN cancel_count INTEGER NOT NULL DEFAULT 0;
            CREATE TABLE driver_cancels (
                order_id TEXT NOT NULL,
                redispatch INTEGER NOT NULL,
                driver_id TEXT NOT NULL,
                PRIMARY KEY (order_id, redispatch)
            ) WITHOUT ROWID;
            """
        ),
        // The keyed requests answered (idempotency keys), kept 24 hours.
        ("v5", RequestTable.sql),
        ("v6", Outbox.traceColumnsSQL),
        ("v7", SessionTable.sql),
        ("v8", IdentityTable.sql),
        ("v9", PhotoTable.sql),
        // The refresh token a rotation replaced: only it coming back is a reuse (`rotateSession`).
        ("v10", "ALTER TABLE sessions ADD COLUMN previous_refresh_hash TEXT;"),
        ("v11", PhotoTable.replacedSQL),
        // The car's make and colour (seed 000's car{model, make, color}).
        ("v12", "ALTER TABLE users ADD COLUMN car_make TEXT; ALTER TABLE users ADD COLUMN car_color TEXT;"),
        // An operator's suspension (`users.suspend`).
        ("v13", "ALTER TABLE users ADD COLUMN suspended_at_ms INTEGER; ALTER TABLE users ADD COLUMN suspension_reason TEXT;"),
        // Drivers' documents and approval (`DocumentOps`).
        ("v14", DocumentTable.sql),
    ]

    /// Counts a rating in the ratee's average, once per order and side; false when it was counted before.
    @discardableResult
    public func record(_ rated: OrderRated) async throws -> Bool {
        try await database.write { db in
            try db.run(
                "INSERT OR IGNORE INTO ratings (order_id, rater_role, ratee_id, stars) VALUES (?, ?, ?, ?)",
                [rated.orderID, rated.raterRole.rawValue, rated.rateeID, rated.rating.stars])
            guard db.changesCount == 1 else { return false }
            try db.run(
                "UPDATE users SET rating_sum = rating_sum + ?, rating_count = rating_count + 1 WHERE id = ?",
                [rated.rating.stars, rated.rateeID])
            return true
        }
    }

    /// Counts a driver's cancel on their record, once per order and time; false when it was counted before.
    @discardableResult
    public func record(_ cancelled: DriverCancelled) async throws -> Bool {
        try await database.write { db in
            try db.run(
                "INSERT OR IGNORE INTO driver_cancels (order_id, redispatch, driver_id) VALUES (?, ?, ?)",
                [cancelled.orderID, cancelled.redispatch, cancelled.driverID])
            guard db.changesCount == 1 else { return false }
            try db.run("UPDATE users SET cancel_count = cancel_count + 1 WHERE id = ?", [cancelled.driverID])
            return true
        }
    }

    /// Saves a place: `home` and `work` replace the user's previous one (keeping its id); `other` adds one.
    public func save(_ place: SavedPlace) async throws -> SavedPlace {
        try await database.write { db in
            guard try db.value(String.self, "SELECT id FROM users WHERE id = ?", [place.userID]) != nil else {
                throw UserStoreFailure.unknownUser
            }
            var place = place
            if place.label != .other,
                let existing = try db.value(
                    String.self, "SELECT id FROM saved_places WHERE user_id = ? AND label = ?",
                    [place.userID, place.label.rawValue])
            {
                place.id = existing
                try db.run("UPDATE saved_places SET document = ? WHERE id = ?", [try JSONCoding.encodeText(place), existing])
                return place
            }
            let count = try db.value(Int.self, "SELECT COUNT(*) FROM saved_places WHERE user_id = ?", [place.userID]) ?? 0
            guard count < UserStorageRules.placesPerUser else { throw UserStoreFailure.tooManyPlaces(count) }
            try db.run(
                "INSERT INTO saved_places (id, user_id, label, document, created_at_ms) VALUES (?, ?, ?, ?, ?)",
                [
                    place.id, place.userID, place.label.rawValue, try JSONCoding.encodeText(place),
                    UserRow.milliseconds(place.createdAt),
                ])
            return place
        }
    }

    /// A user's saved places, oldest first.
    public func places(userID: String) async throws -> [SavedPlace] {
        try await database.read { db in
            try String.fetchAll(
                db.cachedStatement(sql: "SELECT document FROM saved_places WHERE user_id = ? ORDER BY created_at_ms, id"),
                arguments: [userID]
            )
            .map { try JSONCoding.decode(SavedPlace.self, fromText: $0) }
        }
    }

    public func deletePlace(userID: String, id: String) async throws {
        try await database.write { db in
            try db.run("DELETE FROM saved_places WHERE id = ? AND user_id = ?", [id, userID])
            if db.changesCount == 0 { throw UserStoreFailure.unknownPlace }
        }
    }

    /// Inserts the user and its `user.registered` event in one transaction.
    @discardableResult
    public func register(_ user: User, passwordHash: String) async throws -> UInt64 {
        let sequence = try await database.tracedWrite { db in
            if try Self.idForPhone(db, user.phoneNumber) != nil { throw UserStoreFailure.phoneTaken }
            if let deviceID = user.deviceID, try Self.idForDevice(db, deviceID) != nil { throw UserStoreFailure.deviceTaken }
            try db.run(
                """
                INSERT INTO users (id, role, name, phone_number, device_id, car_model, car_license_plate, car_make, car_color, password_hash, created_at_ms, updated_at_ms)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """,
                [
                    user.id, user.role.rawValue, user.name, user.phoneNumber, user.deviceID, user.car?.model, user.car?.licensePlate,
                    user.car?.make,
                    user.car?.color, passwordHash, UserRow.milliseconds(user.createdAt), UserRow.milliseconds(user.createdAt),
                ])
            return try Outbox.append(
                db, Events.userRegistered,
                data: UserRegistered(user: user), time: user.createdAt)
        }
        storedCount.add(1, ordering: .relaxed)
        return sequence
    }

    /// The user and their password hash.
    public func credentials(phoneNumber: String) async throws -> (User, String)? {
        try await database.read { db in
            try Row.fetchOne(db.cachedStatement(sql: "SELECT * FROM users WHERE phone_number = ?"), arguments: [phoneNumber]).map {
                (Self.user($0), $0["password_hash"])
            }
        }
    }

    public func user(id: String) async throws -> User? {
        try await database.read { db in
            try Row.fetchOne(db.cachedStatement(sql: "SELECT * FROM users WHERE id = ?"), arguments: [id]).map(Self.user)
        }
    }

    /// Applies the changes (a new password already hashed); returns the updated user.
    public func update(_ changes: UpdateUserParams, passwordHash: String?, now: Date) async throws -> User {
        try await database.write { db in
            guard let row = try Row.fetchOne(db.cachedStatement(sql: "SELECT * FROM users WHERE id = ?"), arguments: [changes.id]) else {
                throw UserStoreFailure.unknownUser
            }
            var user = Self.user(row)
            if let phone = changes.phoneNumber, phone != user.phoneNumber {
                if try Self.idForPhone(db, phone) != nil { throw UserStoreFailure.phoneTaken }
                user.phoneNumber = phone
            }
            if let name = changes.name { user.name = name }
            if let deviceID = changes.deviceID, deviceID != user.deviceID {
                if try Self.idForDevice(db, deviceID) != nil { throw UserStoreFailure.deviceTaken }
                user.deviceID = deviceID
            }
            // The car's photo is put_photo's to change.
            if var car = changes.car {
                car.photoURL = user.car?.photoURL
                user.car = car
            }
            try db.run(
                """
                UPDATE users SET name = ?, phone_number = COALESCE(?, phone_number), device_id = ?, car_model = ?, car_license_plate = ?,
                    car_make = ?, car_color = ?, password_hash = COALESCE(?, password_hash), updated_at_ms = ? WHERE id = ?
                """,
                [
                    user.name, changes.phoneNumber, user.deviceID, user.car?.model, user.car?.licensePlate, user.car?.make, user.car?.color,
                    passwordHash,
                    UserRow.milliseconds(now), user.id,
                ])
            // A new password ends every session: whoever had the old one is logged out.
            if passwordHash != nil {
                try db.run(
                    "UPDATE sessions SET revoked_at_ms = ? WHERE user_id = ? AND revoked_at_ms IS NULL",
                    [UserRow.milliseconds(now), user.id])
            }
            return user
        }
    }

    public func setPhoto(_ photo: StoredPhoto, userID: String, kind: PhotoKind, now: Date, keepReplaced: TimeInterval) async throws -> User
    {
        try await database.write { db in
            guard let row = try Row.fetchOne(db.cachedStatement(sql: "SELECT * FROM users WHERE id = ?"), arguments: [userID]) else {
                throw UserStoreFailure.unknownUser
            }
            if kind == .car, Self.user(row).car == nil { throw UserStoreFailure.noCar }
            let (at, replaced): (Int64, String?) = (UserRow.milliseconds(now), row[PhotoTable.column(kind)])
            try db.run(
                """
                INSERT INTO photos (sha256, content_type, width, height, bytes, created_at_ms) VALUES (?, ?, ?, ?, ?, ?)
                ON CONFLICT (sha256) DO UPDATE SET replaced_at_ms = NULL
                """,
                [photo.sha256, photo.contentType, photo.width, photo.height, photo.bytes, at])
            try db.run("UPDATE users SET \(PhotoTable.column(kind)) = ?, updated_at_ms = ? WHERE id = ?", [photo.sha256, at, userID])
            if let replaced, replaced != photo.sha256 {
                try db.run("UPDATE photos SET replaced_at_ms = ? WHERE sha256 = ? AND \(PhotoTable.unreferenced)", [at, replaced])
            }
            try db.run(
                "DELETE FROM photos WHERE replaced_at_ms IS NOT NULL AND replaced_at_ms <= ? AND \(PhotoTable.unreferenced)",
                [at - Int64(keepReplaced * 1000)])
            guard let updated = try Row.fetchOne(db, sql: "SELECT * FROM users WHERE id = ?", arguments: [userID]) else {
                throw UserStoreFailure.unknownUser
            }
            return Self.user(updated)
        }
    }

    public func photo(sha256: String) async throws -> StoredPhoto? {
        try await database.read { db in
            try Row.fetchOne(db, sql: "SELECT * FROM photos WHERE sha256 = ?", arguments: [sha256]).map {
                StoredPhoto(
                    sha256: $0["sha256"], contentType: $0["content_type"], width: $0["width"], height: $0["height"], bytes: $0["bytes"])
            }
        }
    }

    private static func idForPhone(_ db: Database, _ phone: String) throws -> String? {
        try db.value(String.self, "SELECT id FROM users WHERE phone_number = ?", [phone])
    }

    public func setSuspension(userID: String, reason: String?, now: Date) async throws -> User? {
        try await database.write { db in
            guard
                let before = try Row.fetchOne(
                    db.cachedStatement(sql: "SELECT suspended_at_ms FROM users WHERE id = ?"), arguments: [userID])
            else { return nil }
            let wasSuspended = (before["suspended_at_ms"] as Int64?) != nil
            // Suspended again (a retry): since the first time.
            let at = reason == nil ? nil : UserRow.milliseconds(now)
            try db.run(
                "UPDATE users SET suspended_at_ms = CASE WHEN ? IS NULL THEN NULL ELSE COALESCE(suspended_at_ms, ?) END, suspension_reason = ? WHERE id = ?",
                [at, at, reason, userID])
            if reason != nil {
                try db.run(
                    "UPDATE sessions SET revoked_at_ms = ? WHERE user_id = ? AND revoked_at_ms IS NULL",
                    [UserRow.milliseconds(now), userID])
            }
            let user = try Row.fetchOne(db.cachedStatement(sql: "SELECT * FROM users WHERE id = ?"), arguments: [userID]).map(Self.user)
            if !wasSuspended, let suspended = user.flatMap(UserSuspended.init) {
                _ = try Outbox.append(db, Events.userSuspended, data: suspended, time: now)
            }
            return user
        }
    }

    public func users(matching search: PeopleSearch) async throws -> [User] {
        let a = search.arguments
        return try await database.read { db in
            try Row.fetchAll(
                db.cachedStatement(sql: PeopleSearch.sql(columns: "*")),
                arguments: [a.pattern, a.pattern, a.pattern, a.id, a.role, a.role, a.suspended, a.suspended, a.limit]
            ).map(Self.user)
        }
    }

    static func idForDevice(_ db: Database, _ deviceID: String) throws -> String? {
        try db.value(String.self, "SELECT id FROM users WHERE device_id = ?", [deviceID])
    }

    static func user(_ row: Row) -> User {
        UserRow(
            id: row["id"], role: row["role"], name: row["name"], phoneNumber: row["phone_number"], deviceID: row["device_id"],
            carModel: row["car_model"], carLicensePlate: row["car_license_plate"], carMake: row["car_make"], carColor: row["car_color"],
            createdAtMS: row["created_at_ms"],
            ratingSum: row["rating_sum"], ratingCount: row["rating_count"], cancelCount: row["cancel_count"],
            photoSHA256: row["photo_sha256"], carPhotoSHA256: row["car_photo_sha256"], suspendedAtMS: row["suspended_at_ms"],
            suspensionReason: row["suspension_reason"], licenceExpiresOn: row["licence_expires_on"],
            licenceUploadedAtMS: row["licence_uploaded_at_ms"],
            insuranceExpiresOn: row["insurance_expires_on"], insuranceUploadedAtMS: row["insurance_uploaded_at_ms"],
            approvedAtMS: row["approved_at_ms"]
        ).user
    }
}
