import Bus
import Foundation
import RideModels
import Storage

/// What the users service keeps: one protocol, a SQLite store (`UserStore`, the default) and a
/// PostgreSQL one (`PostgresUserStore`, when `RIDE_DATABASE_URL` is set, shared by instances).
/// Both pass the same storage test suite.
public protocol UserStorage: ReactorCursors {
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
}

public enum UserStoreFailure: Error, Equatable {
    case phoneTaken
    /// The device id is another account's.
    case deviceTaken
    case unknownUser
    case tooManyPlaces(Int)
    case unknownPlace
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
    var createdAtMS: Int64
    var ratingSum: Int
    var ratingCount: Int
    var cancelCount: Int

    var user: User {
        var user = User(
            id: id, role: UserRole(rawValue: role) ?? .rider, name: name, phoneNumber: phoneNumber, deviceID: deviceID,
            car: carModel.flatMap { model in carLicensePlate.map { Car(model: model, licensePlate: $0) } },
            createdAt: Date(timeIntervalSince1970: Double(createdAtMS) / 1000))
        if ratingCount > 0 {
            user.rating = UserRating(average: (Double(ratingSum) / Double(ratingCount) * 100).rounded() / 100, count: ratingCount)
        }
        if cancelCount > 0 { user.cancellations = cancelCount }
        return user
    }

    static func milliseconds(_ date: Date) -> Int64 { Int64((date.timeIntervalSince1970 * 1000).rounded()) }
}
