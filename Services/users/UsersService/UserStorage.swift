import Bus
import Foundation
import RideModels
import Storage

/// What the users service keeps: one protocol, a SQLite store (`UserStore`, the default) and a
/// PostgreSQL one (`PostgresUserStore`, when `RIDE_DATABASE_URL` is set, shared by instances).
/// Both pass the same storage test suite.
public protocol UserStorage: ReactorCursors, PhotoStorage, DocumentStorage {
    /// Users stored (as last seen by this process: /health and /metrics never query the database).
    var count: Int { get }
    /// The outbox of `user.*` events, for the relay and the `events` op.
    var eventLog: any EventLog { get }
    /// Where keyed requests are remembered (`OpRouter.requests`).
    var requestLog: any RequestLog { get }

    /// Inserts the user and its `user.registered` event in one transaction; returns the event's sequence.
    @discardableResult
    func register(_ user: User, passwordHash: String) async throws -> UInt64
    /// The user and their password hash.
    func credentials(phoneNumber: String) async throws -> (User, String)?
    func user(id: String) async throws -> User?
    /// Applies the changes (a new password already hashed); returns the updated user.
    func update(_ changes: UpdateUserParams, passwordHash: String?, now: Date) async throws -> User
    /// Counts a rating in the ratee's average, once per order and side; false when it was counted before.
    @discardableResult
    func record(_ rated: OrderRated) async throws -> Bool
    /// Counts a driver's cancel on their record, once per order and time; false when it was counted before.
    @discardableResult
    func record(_ cancelled: DriverCancelled) async throws -> Bool
    /// Saves a place: `home` and `work` replace the user's previous one (keeping its id); `other` adds one.
    func save(_ place: SavedPlace) async throws -> SavedPlace
    /// A user's saved places, oldest first.
    func places(userID: String) async throws -> [SavedPlace]
    func deletePlace(userID: String, id: String) async throws

    /// Stores a new session (a login); drops the user's sessions whose refresh token expired.
    func createSession(_ session: SessionRecord) async throws
    /// Swaps a session's refresh token (`presentedHash`, current) for `nextHash`. A presented
    /// token that is not the current one is a rotated one used again: the session is revoked.
    func rotateSession(_ id: String, presentedHash: String, nextHash: String, now: Date, expiresAt: Date) async throws -> SessionRotation
    /// Revokes one session (log out); false when it was unknown or revoked already.
    @discardableResult
    func revokeSession(_ id: String, now: Date) async throws -> Bool
    /// Suspends the account (`reason`) and revokes every session of it in one transaction, or
    /// (`reason` nil) lifts the suspension; the user as stored, or nil for an unknown id. An
    /// account suspended again keeps the time of its first suspension (a retry changes nothing).
    func setSuspension(userID: String, reason: String?, now: Date) async throws -> User?
    /// The users `search` matches, newest first, at most its limit.
    func users(matching search: PeopleSearch) async throws -> [User]
    /// False when the session was revoked or never existed: its access tokens are refused.
    func sessionIsActive(_ id: String) async throws -> Bool
    /// When an active session of `user` logged in; nil for another's, a revoked or an unknown one.
    func loggedIn(session id: String, user: String) async throws -> Date?
    /// The user of a session neither revoked nor expired at `now`; nil otherwise.
    func liveSessionUser(_ id: String, now: Date) async throws -> String?

    /// The user an identity (provider and subject) logs in; nil when it is linked to none.
    func user(identity provider: IdentityProvider, subject: String) async throws -> User?
    /// Inserts a user made by a social sign-in (no phone number, no password), its identity and
    /// its `user.registered` event in one transaction; `identityTaken` when the identity was linked meanwhile.
    func register(_ user: User, identity: LinkedIdentity) async throws
    /// Links an identity to its user; the link stored before when it is that user's already,
    /// `identityTaken` when it is another's, `unknownUser` when the user is not there.
    func link(_ identity: LinkedIdentity) async throws -> LinkedIdentity
}

/// A session: one login, its refresh token kept as a hash.
public struct SessionRecord: Sendable, Equatable {
    public var id: String
    public var userID: String
    public var refreshHash: String
    public var createdAt: Date
    /// When the refresh token stops working.
    public var expiresAt: Date
}

/// What presenting a refresh token did.
public enum SessionRotation: Sendable, Equatable {
    /// The token was the session's current one and is replaced; the session's user.
    case rotated(userID: String)
    /// The token this session's last rotation replaced came back (stolen, or a client's stale
    /// copy): the session is now revoked.
    case reused
    /// A token of this session's id that it never gave (made up by someone who read the id in an
    /// access token): refused, the session untouched.
    case forged
    case revoked
    case expired
    case unknown
}

public enum UserStoreFailure: Error, Equatable {
    case phoneTaken
    /// The device id is another account's.
    case deviceTaken
    case unknownUser
    case tooManyPlaces(Int)
    case unknownPlace
    /// The identity logs in another account.
    case identityTaken
    /// A car photo for a user without a car.
    case noCar
    /// A document or an approval for a rider.
    case notADriver
    /// An approval before these documents are there.
    case documentsMissing([DocumentKind])
    /// An approval with this document expired.
    case documentExpired(DriverDocument)
}

/// The sessions table (`UserStore.migrations` v7), in both stores.
enum SessionTable {
    static let sql = """
        -- One row per login: the refresh token's SHA-256 (the token itself is never stored),
        -- when it stops working, and when the session was revoked (log out, password change,
        -- a rotated refresh token used again). Access tokens name their session (sid).
        CREATE TABLE sessions (
            id TEXT PRIMARY KEY NOT NULL,
            user_id TEXT NOT NULL,
            refresh_hash TEXT NOT NULL,
            created_at_ms INTEGER NOT NULL,
            expires_at_ms INTEGER NOT NULL,
            revoked_at_ms INTEGER
        );
        CREATE INDEX sessions_by_user ON sessions (user_id);
        """
}

public enum UserStorageRules {
    /// How many places one user may save.
    public static let placesPerUser = 50
}

/// A `users` row as both stores read it.
struct UserRow {
    var id: String
    var role: String
    var name: String
    var phoneNumber: String
    var deviceID: String?
    var carModel: String?
    var carLicensePlate: String?
    var carMake: String?
    var carColor: String?
    var createdAtMS: Int64
    var ratingSum: Int
    var ratingCount: Int
    var cancelCount: Int
    var photoSHA256: String? = nil
    var carPhotoSHA256: String? = nil
    var suspendedAtMS: Int64? = nil
    var suspensionReason: String? = nil
    var licenceExpiresOn: String? = nil
    var licenceUploadedAtMS: Int64? = nil
    var insuranceExpiresOn: String? = nil
    var insuranceUploadedAtMS: Int64? = nil
    var approvedAtMS: Int64? = nil

    var user: User {
        var user = User(
            id: id, role: UserRole(rawValue: role) ?? .rider, name: name, phoneNumber: phoneNumber, deviceID: deviceID,
            car: carModel.flatMap { model in
                carLicensePlate.map {
                    Car(
                        model: model, licensePlate: $0, make: carMake, color: carColor,
                        photoURL: carPhotoSHA256.map { PhotoRules.path(sha256: $0) })
                }
            },
            createdAt: UserRow.date(createdAtMS))
        if ratingCount > 0 {
            user.rating = UserRating(average: (Double(ratingSum) / Double(ratingCount) * 100).rounded() / 100, count: ratingCount)
        }
        if cancelCount > 0 { user.cancellations = cancelCount }
        user.suspendedAt = suspendedAtMS.map(UserRow.date)
        user.suspensionReason = suspensionReason
        if IdentityTable.isPlaceholder(phoneNumber) { user.phoneNumber = "" }
        user.photoURL = photoSHA256.map { PhotoRules.path(sha256: $0) }
        let documents = [
            (DocumentKind.licence, licenceExpiresOn, licenceUploadedAtMS), (.insurance, insuranceExpiresOn, insuranceUploadedAtMS),
        ]
        .compactMap { kind, expiresOn, uploadedAt in
            expiresOn.flatMap { day in
                uploadedAt.map {
                    DriverDocument(
                        kind: kind, expiresOn: day, uploadedAt: UserRow.date($0), photoURL: DocumentTable.path(userID: id, kind: kind))
                }
            }
        }
        user.documents = documents.isEmpty ? nil : documents
        user.approvedAt = approvedAtMS.map(UserRow.date)
        return user
    }

    static func milliseconds(_ date: Date) -> Int64 { Int64((date.timeIntervalSince1970 * 1000).rounded()) }
    static func date(_ milliseconds: Int64) -> Date { Date(timeIntervalSince1970: Double(milliseconds) / 1000) }
}
