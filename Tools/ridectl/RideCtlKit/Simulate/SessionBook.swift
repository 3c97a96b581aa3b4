import Foundation
import RideModels
import Wire

/// Each simulated person's session at the gateway: the access token their phone sends, refreshed
/// (`POST /v1/auth/refresh`) a minute before it expires, once however many calls ask meanwhile.
actor SessionBook {
    private let requests: GatewayRequests
    private var sessions: [String: Session] = [:]
    private var refreshing: [String: Task<Session, any Error>] = [:]
    /// How long before its expiry a token is refreshed.
    private let margin: TimeInterval = 60

    init(requests: GatewayRequests) {
        self.requests = requests
    }

    func keep(_ session: Session) {
        sessions[session.user.id] = session
    }

    /// A token of `userID`'s that is good for at least `margin` more.
    func token(for userID: String) async throws -> String {
        guard let session = sessions[userID] else { throw GatewayRequests.Failure("\(userID) has not logged in") }
        if session.expiresAt.timeIntervalSinceNow > margin { return session.token }
        if let task = refreshing[userID] { return try await task.value.token }
        let requests = self.requests
        let task = Task {
            let body = try JSONCoding.encode(["refresh_token": JSONValue.string(session.refreshToken)] as JSONValue)
            // Keyed: a refresh whose reply was lost, sent again, gets the same pair.
            let reply = try await requests.send("POST", "/v1/auth/refresh", body: body, key: "refresh-\(session.refreshToken.suffix(16))")
            return try JSONCoding.decode(Session.self, from: reply)
        }
        refreshing[userID] = task
        defer { refreshing[userID] = nil }
        let fresh = try await task.value
        sessions[userID] = fresh
        return fresh.token
    }
}
