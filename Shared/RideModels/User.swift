import Foundation
import Wire

/// Riders book rides; drivers drive them (docs/services/users.md).
@WireModel
public enum UserRole: String, Codable, Sendable, CaseIterable {
    case rider, driver
}

@WireModel
public struct Car: Codable, Sendable, Equatable {
    @WireField(maxLength: 100, pattern: TextPatterns.line, meaning: TextPatterns.lineMeaning)
    public var model: String
    @WireField(maxLength: 20, pattern: TextPatterns.line, meaning: TextPatterns.lineMeaning)
    public var licensePlate: String
    /// Who made it ("Toyota") and its colour ("white"), as the rider looks for it at the pickup.
    @WireField(maxLength: 40, pattern: TextPatterns.line, meaning: TextPatterns.lineMeaning)
    public var make: String?
    @WireField(maxLength: 40, pattern: TextPatterns.line, meaning: TextPatterns.lineMeaning)
    public var color: String?
    /// The car's photo (`PUT /v1/me/car/photo`); set by `users.put_photo` only, ignored in a
    /// registration or update.
    @WireField(pattern: PhotoRules.pathPattern, meaning: "the gateway's path of a stored photo")
    public var photoURL: String?

    public init(model: String, licensePlate: String, make: String? = nil, color: String? = nil, photoURL: String? = nil) {
        self.model = model
        self.licensePlate = licensePlate
        self.make = make
        self.color = color
        self.photoURL = photoURL
    }

    /// How a rider finds it: "white Toyota Prius (AB 1234)".
    public var description: String {
        ([color, make, model].compactMap { $0 }.joined(separator: " ")) + " (\(licensePlate))"
    }
}

/// A user as every service sees one (never with a credential).
/// A driver as a share link shows them: the name and the car.
@WireModel
public struct SharedDriver: Codable, Sendable, Equatable {
    public var name: String
    public var car: Car?
    /// The driver's profile photo (the gateway's path of it).
    public var photoURL: String?

    public init(name: String, car: Car?, photoURL: String? = nil) {
        self.name = name
        self.car = car
        self.photoURL = photoURL
    }
}

@WireModel
public struct User: Codable, Sendable, Equatable {
    public var id: String
    public var role: UserRole
    public var name: String
    public var phoneNumber: String
    /// The tracking SDK's device id (drivers).
    public var deviceID: String?
    public var car: Car?
    public var createdAt: Date
    /// The stars others gave them (absent until the first rating).
    public var rating: UserRating?
    /// How many rides a driver accepted and then cancelled before the ride (absent for none).
    public var cancellations: Int?
    /// Their profile photo, the gateway's path of it (`PUT /v1/me/photo`); absent until one.
    public var photoURL: String?
    /// When an operator suspended the account (`users.suspend`), and why; absent unless suspended.
    public var suspendedAt: Date?
    public var suspensionReason: String?
    /// A driver's documents the operator vets (their own and operators' eyes: what a ride shows of
    /// a driver is `OrderParty`, never this); absent until the first upload.
    public var documents: [DriverDocument]?
    /// When the driver was approved for shifts (by an operator, or at sign-up where approval is
    /// automatic); absent while not approved — before it, or after a document expired.
    public var approvedAt: Date?

    public init(id: String, role: UserRole, name: String, phoneNumber: String, deviceID: String? = nil, car: Car? = nil, createdAt: Date) {
        self.id = id
        self.role = role
        self.name = name
        self.phoneNumber = phoneNumber
        self.deviceID = deviceID
        self.car = car
        self.createdAt = createdAt
    }
}

/// What an operator vets of a driver: their driving licence and their insurance.
@WireModel
public enum DocumentKind: String, Codable, Sendable, CaseIterable {
    case licence, insurance
}

/// A driver's document: its photo (shown to operators) and the last day it is valid.
@WireModel
public struct DriverDocument: Codable, Sendable, Equatable {
    public var kind: DocumentKind
    /// The last day the document is valid, `YYYY-MM-DD` (UTC).
    @WireField(pattern: DriverApproval.dayPattern, meaning: DriverApproval.dayMeaning)
    public var expiresOn: String
    public var uploadedAt: Date
    /// Its photo's path on the gateway, for operators (`GET /dashboard/users/{id}/documents/{kind}`).
    public var photoURL: String

    public init(kind: DocumentKind, expiresOn: String, uploadedAt: Date, photoURL: String) {
        (self.kind, self.expiresOn, self.uploadedAt, self.photoURL) = (kind, expiresOn, uploadedAt, photoURL)
    }
}

/// `users.put_document`: a driver's photo of a document (base64 of a JPEG or PNG, as a profile
/// photo) and the last day it is valid.
@WireModel
public struct DocumentUpload: Codable, Sendable, Equatable {
    public var userID: String
    public var kind: DocumentKind
    @WireField(pattern: DriverApproval.dayPattern, meaning: DriverApproval.dayMeaning)
    public var expiresOn: String
    @WireField(maxLength: PhotoRules.maxBase64Length)
    public var data: String

    public init(userID: String, kind: DocumentKind, expiresOn: String, data: String) {
        (self.userID, self.kind, self.expiresOn, self.data) = (userID, kind, expiresOn, data)
    }
}

/// `users.document`: a driver's document photo, for an operator.
@WireModel
public struct DocumentQuery: Codable, Sendable, Equatable {
    public var userID: String
    public var kind: DocumentKind

    public init(userID: String, kind: DocumentKind) { (self.userID, self.kind) = (userID, kind) }
}

/// `user.approval_lapsed`: a driver's approval ended (a document expired, or an operator withdrew
/// it); tracking takes their device off duty, and they go online again only once approved again.
@WireModel
public struct DriverApprovalLapsed: Codable, Sendable, Equatable {
    public var userID: String
    public var deviceID: String?
    public var reason: String

    public init(userID: String, deviceID: String?, reason: String) {
        (self.userID, self.deviceID, self.reason) = (userID, deviceID, reason)
    }
}

/// When a driver may take a shift: approved, with no document expired.
public enum DriverApproval {
    public static let dayPattern = #"^[0-9]{4}-[0-9]{2}-[0-9]{2}$"#
    public static let dayMeaning = "a day, YYYY-MM-DD"
    /// The documents an operator approves a driver on.
    public static let required = DocumentKind.allCases

    /// `YYYY-MM-DD` of `date` in UTC: the days documents are compared by (as strings, in order).
    public static func day(_ date: Date) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let parts = calendar.dateComponents([.year, .month, .day], from: date)
        return String(format: "%04d-%02d-%02d", parts.year ?? 1970, parts.month ?? 1, parts.day ?? 1)
    }

    /// Whether `text` is a real day (not 2027-02-30).
    public static func isDay(_ text: String) -> Bool {
        guard text.wholeMatch(of: /[0-9]{4}-[0-9]{2}-[0-9]{2}/) != nil else { return false }
        let parts = text.split(separator: "-").compactMap { Int($0) }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        guard parts.count == 3, let date = calendar.date(from: DateComponents(year: parts[0], month: parts[1], day: parts[2])) else {
            return false
        }
        return day(date) == text
    }

    /// The documents of `user` expired before `today`.
    public static func expired(_ user: User, today: String) -> [DriverDocument] { (user.documents ?? []).filter { $0.expiresOn < today } }

    /// Why `user` may not go online `today`, for the driver to read; nil when they may.
    public static func problem(_ user: User, today: String) -> String? {
        guard user.role == .driver else { return nil }
        if let expired = expired(user, today: today).first {
            return
                "your \(expired.kind.rawValue) expired on \(expired.expiresOn): upload the new one (PUT /v1/me/documents/\(expired.kind.rawValue))"
        }
        guard user.approvedAt == nil else { return nil }
        let missing = required.filter { kind in !(user.documents ?? []).contains { $0.kind == kind } }
        if !missing.isEmpty {
            return
                "upload your \(missing.map(\.rawValue).joined(separator: " and ")) (PUT /v1/me/documents/{kind}); an operator then approves you"
        }
        return "an operator has not approved your documents yet"
    }
}

/// `users.suspend`: an operator suspends an account, saying why.
@WireModel
public struct SuspendParams: Codable, Sendable, Equatable {
    public var id: String
    @WireField(minLength: 1, maxLength: 500, pattern: TextPatterns.line, meaning: TextPatterns.lineMeaning)
    public var reason: String

    public init(id: String, reason: String) {
        self.id = id
        self.reason = reason
    }
}

/// `users.search`: an operator looks for riders and drivers — by a part of the name or phone
/// number, or the whole id — newest first.
@WireModel
public struct SearchUsersParams: Codable, Sendable, Equatable {
    @WireField(minLength: 1, maxLength: 100, pattern: TextPatterns.line, meaning: TextPatterns.lineMeaning)
    public var query: String?
    public var role: UserRole?
    /// Only suspended accounts (true), only others (false), or both (absent).
    public var suspended: Bool?
    @WireField(minimum: 1, maximum: 100)
    public var limit: Int?

    public init(query: String? = nil, role: UserRole? = nil, suspended: Bool? = nil, limit: Int? = nil) {
        self.query = query
        self.role = role
        self.suspended = suspended
        self.limit = limit
    }
}

/// `users.search`'s answer.
@WireModel
public struct People: Codable, Sendable, Equatable {
    public var users: [User]
    public init(users: [User]) { self.users = users }
}

/// `users.register`.
@WireModel
public struct RegisterParams: Codable, Sendable, Equatable {
    public var role: UserRole
    @WireField(maxLength: 100, pattern: TextPatterns.line, meaning: TextPatterns.lineMeaning)
    public var name: String
    @WireField(pattern: TextPatterns.phoneNumber, meaning: TextPatterns.phoneNumberMeaning)
    public var phoneNumber: String
    @WireField(minLength: 8, maxLength: 1024)
    public var password: String
    @WireField(pattern: TextPatterns.deviceID, meaning: TextPatterns.deviceIDMeaning)
    public var deviceID: String?
    public var car: Car?

    public init(role: UserRole, name: String, phoneNumber: String, password: String, deviceID: String? = nil, car: Car? = nil) {
        self.role = role
        self.name = name
        self.phoneNumber = phoneNumber
        self.password = password
        self.deviceID = deviceID
        self.car = car
    }
}

/// `users.login`.
@WireModel
public struct LoginParams: Codable, Sendable, Equatable {
    public var phoneNumber: String
    public var password: String

    public init(phoneNumber: String, password: String) {
        self.phoneNumber = phoneNumber
        self.password = password
    }
}

/// The reply of `login` and `refresh`: an access token (a JWT) to send as `Authorization: Bearer …`
/// until `expires_at`, and the refresh token that gets the next pair until `refresh_expires_at`.
@WireModel
public struct Session: Codable, Sendable, Equatable {
    public var token: String
    public var expiresAt: Date
    public var refreshToken: String
    public var refreshExpiresAt: Date
    public var user: User
    /// A driver's: what their phone's tracking SDK sends to stream as their device (`DeviceCredential`).
    public var deviceCredential: String?

    public init(token: String, expiresAt: Date, refreshToken: String, refreshExpiresAt: Date, user: User, deviceCredential: String? = nil) {
        self.token = token
        self.expiresAt = expiresAt
        self.refreshToken = refreshToken
        self.refreshExpiresAt = refreshExpiresAt
        self.user = user
        self.deviceCredential = deviceCredential
    }
}

/// `users.authenticate`.
@WireModel
public struct AuthenticateParams: Codable, Sendable, Equatable {
    public var token: String
    public init(token: String) { self.token = token }
}

/// `users.get`.
@WireModel
public struct UserIDParams: Codable, Sendable, Equatable {
    public var id: String
    public init(id: String) { self.id = id }
}

/// `users.update`: the fields to change; absent fields stay. The caller (the gateway) has
/// authenticated the user and passes their id, and the session it asks in. A new password or phone
/// number also needs the account's current password, or a session that logged in moments ago: a
/// stolen access token alone must not take the account over.
@WireModel
public struct UpdateUserParams: Codable, Sendable, Equatable {
    public var id: String
    @WireField(maxLength: 100, pattern: TextPatterns.line, meaning: TextPatterns.lineMeaning)
    public var name: String?
    @WireField(pattern: TextPatterns.phoneNumber, meaning: TextPatterns.phoneNumberMeaning)
    public var phoneNumber: String?
    @WireField(minLength: 8, maxLength: 1024)
    public var password: String?
    @WireField(pattern: TextPatterns.deviceID, meaning: TextPatterns.deviceIDMeaning)
    public var deviceID: String?
    public var car: Car?
    /// The account's password as it is now: required with `password` or `phone_number`, unless
    /// the session logged in moments ago.
    @WireField(maxLength: 1024)
    public var currentPassword: String?
    /// The caller's session (the gateway's to fill, from the bearer token).
    @WireField(maxLength: 64)
    public var sessionID: String?

    public init(
        id: String, name: String? = nil, phoneNumber: String? = nil, password: String? = nil, deviceID: String? = nil, car: Car? = nil,
        currentPassword: String? = nil, sessionID: String? = nil
    ) {
        self.id = id
        self.name = name
        self.phoneNumber = phoneNumber
        self.password = password
        self.deviceID = deviceID
        self.car = car
        self.currentPassword = currentPassword
        self.sessionID = sessionID
    }

    /// Whether these changes need the current password: a new password, or a new phone number (the
    /// log-in's other half).
    public func needsCurrentPassword(of user: User) -> Bool {
        password != nil || (phoneNumber.map { $0 != user.phoneNumber } ?? false)
    }
}

/// `user.suspended` data: who, their phone (a driver's device), why and since when — what the
/// gateways (tokens, sockets) and tracking (the device's credential, availability) end at once.
@WireModel
public struct UserSuspended: Codable, Sendable, Equatable {
    public var userID: String
    public var role: UserRole
    public var deviceID: String?
    public var reason: String
    public var suspendedAt: Date

    public init(userID: String, role: UserRole, deviceID: String?, reason: String, suspendedAt: Date) {
        self.userID = userID
        self.role = role
        self.deviceID = deviceID
        self.reason = reason
        self.suspendedAt = suspendedAt
    }

    /// The event of `user`'s suspension, once stored.
    public init?(_ user: User) {
        guard let at = user.suspendedAt else { return nil }
        self.init(userID: user.id, role: user.role, deviceID: user.deviceID, reason: user.suspensionReason ?? "", suspendedAt: at)
    }
}

/// `user.registered` data.
@WireModel
public struct UserRegistered: Codable, Sendable, Equatable {
    public var user: User
    public init(user: User) { self.user = user }
}
