import Foundation
import Wire

/// Who vouches for a social sign-in: Apple and Google by an OpenID Connect ID token, Facebook by
/// an access token its Graph API's `debug_token` confirms.
@WireModel
public enum IdentityProvider: String, Codable, Sendable, CaseIterable {
    case apple, google, facebook
}

/// `users.login_with_identity`: the gateway has verified the provider's token; `subject` is the
/// provider's stable id of the person. A known identity logs its account in; an unknown one makes
/// an account (`role`, `name`; a driver also needs `car` and `device_id`).
@WireModel
public struct IdentityLoginParams: Codable, Sendable, Equatable {
    public var provider: IdentityProvider
    @WireField(minLength: 1, maxLength: 255)
    public var subject: String
    public var role: UserRole
    @WireField(maxLength: 100, pattern: TextPatterns.line, meaning: TextPatterns.lineMeaning)
    public var name: String
    @WireField(pattern: TextPatterns.deviceID, meaning: TextPatterns.deviceIDMeaning)
    public var deviceID: String?
    public var car: Car?

    public init(provider: IdentityProvider, subject: String, role: UserRole, name: String, deviceID: String? = nil, car: Car? = nil) {
        self.provider = provider
        self.subject = subject
        self.role = role
        self.name = name
        self.deviceID = deviceID
        self.car = car
    }
}

/// `users.link_identity`: a verified identity added to the logged-in user's account.
@WireModel
public struct LinkIdentityParams: Codable, Sendable, Equatable {
    public var userID: String
    public var provider: IdentityProvider
    @WireField(minLength: 1, maxLength: 255)
    public var subject: String
    /// The proof beyond the access token a link needs (as a new password does): the account's
    /// password, or the session (filled by the gateway from the token) having logged in lately.
    @WireField(maxLength: 1024)
    public var currentPassword: String?
    public var sessionID: String?

    public init(userID: String, provider: IdentityProvider, subject: String, currentPassword: String? = nil, sessionID: String? = nil) {
        self.userID = userID
        self.provider = provider
        self.subject = subject
        self.currentPassword = currentPassword
        self.sessionID = sessionID
    }
}

/// An identity of a provider that logs a user in.
@WireModel
public struct LinkedIdentity: Codable, Sendable, Equatable {
    public var provider: IdentityProvider
    public var subject: String
    public var userID: String
    public var createdAt: Date

    public init(provider: IdentityProvider, subject: String, userID: String, createdAt: Date) {
        self.provider = provider
        self.subject = subject
        self.userID = userID
        self.createdAt = createdAt
    }
}

/// The body of `POST /v1/auth/oidc/{provider}` and `POST /v1/me/identities/{provider}`: the
/// provider's token (Apple, Google: `id_token`; Facebook: `access_token`), the `nonce` the app put
/// in its sign-in request if it put one, and for a new account its role, name and (drivers) car.
@WireModel
public struct IdentityTokenBody: Codable, Sendable, Equatable {
    @WireField(minLength: 1, maxLength: 8192)
    public var idToken: String?
    @WireField(minLength: 1, maxLength: 8192)
    public var accessToken: String?
    @WireField(minLength: 1, maxLength: 255)
    public var nonce: String?
    public var role: UserRole?
    @WireField(maxLength: 100, pattern: TextPatterns.line, meaning: TextPatterns.lineMeaning)
    public var name: String?
    @WireField(pattern: TextPatterns.deviceID, meaning: TextPatterns.deviceIDMeaning)
    public var deviceID: String?
    public var car: Car?
    /// Linking to a signed-in account: its password, when the session did not log in lately.
    @WireField(maxLength: 1024)
    public var currentPassword: String?

    public init(idToken: String? = nil, accessToken: String? = nil, nonce: String? = nil, role: UserRole? = nil, name: String? = nil) {
        self.idToken = idToken
        self.accessToken = accessToken
        self.nonce = nonce
        self.role = role
        self.name = name
    }
}
