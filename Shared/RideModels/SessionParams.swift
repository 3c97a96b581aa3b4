import Foundation
import Wire

/// `users.refresh`: a refresh token from `login` or the last `refresh`; each works once.
@WireModel
public struct RefreshParams: Codable, Sendable, Equatable {
    @WireField(minLength: 1, maxLength: 256)
    public var refreshToken: String

    public init(refreshToken: String) { self.refreshToken = refreshToken }
}

/// The reply of `users.logout`: the session its token named, now revoked.
@WireModel
public struct SessionEnded: Codable, Sendable, Equatable {
    public var sessionID: String
    public var userID: String

    public init(sessionID: String, userID: String) {
        self.sessionID = sessionID
        self.userID = userID
    }
}
