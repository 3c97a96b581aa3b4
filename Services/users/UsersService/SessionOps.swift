import Bus
import Foundation
import RideContract
import RideModels

/// The ops about sessions past `login`: `refresh`, `logout` and `authenticate`. A login stores a
/// session; its access tokens (short-lived JWTs) name it, and its refresh token (long-lived,
/// opaque, rotated on each use) gets the next access token. Every refusal is a 401 with a reason
/// code and stores nothing.
struct SessionOps: Sendable {
    let store: any UserStorage
    let signer: TokenSigner
    /// Makes the device credential a driver's session carries.
    let deviceKeys: DeviceCredentialKeys
    /// How long a refresh token works.
    let refreshLifetime: TimeInterval

    func register(on router: inout OpRouter) {
        router.on(Ops.Users.refresh) { (params: RefreshParams, _) -> Session in
            guard let presented = RefreshToken(parsing: params.refreshToken) else {
                throw Self.refused("token_invalid", "the refresh token is not one of ours")
            }
            let now = Date()
            let next = RefreshToken(session: presented.session)
            let rotation = try await store.rotateSession(
                presented.session, presentedHash: presented.hash, nextHash: next.hash, now: now, expiresAt: now + refreshLifetime)
            switch rotation {
            case .rotated(let userID):
                guard let user = try await store.user(id: userID) else {
                    throw Self.refused("token_invalid", "the session's user no longer exists")
                }
                return try await session(user, id: presented.session, refresh: next, refreshExpiresAt: now + refreshLifetime, now: now)
            case .reused: throw Self.refused("token_reused", "this refresh token was used before; the session is revoked, log in again")
            case .revoked: throw Self.refused("token_revoked", "the session was logged out or its password changed; log in again")
            case .expired: throw Self.refused("token_expired", "the refresh token has expired; log in again")
            case .unknown, .forged: throw Self.refused("token_invalid", "the refresh token is not one of ours")
            }
        }

        router.on(Ops.Users.logout) { (params: AuthenticateParams, _) -> SessionEnded in
            // An expired access token still logs out: a client that slept past it can end its session.
            switch await signer.verifiedClaims(params.token) {
            case .failure(let rejection): throw Self.refused(rejection.code, rejection.description)
            case .success(let claims):
                try await store.revokeSession(claims.sid, now: Date())
                return SessionEnded(sessionID: claims.sid, userID: claims.sub)
            }
        }

        router.on(Ops.Users.authenticate) { (params: AuthenticateParams, _) -> User in
            switch await signer.verify(params.token) {
            case .failure(let rejection): throw Self.refused(rejection.code, rejection.description)
            case .success(let claims):
                // One primary-key read: a logged-out session's tokens stop at once, not at expiry.
                guard try await store.sessionIsActive(claims.sid) else {
                    throw Self.refused("token_revoked", "the session was logged out or its password changed; log in again")
                }
                guard let user = try await store.user(id: claims.sub) else {
                    throw Self.refused("token_invalid", "the token's user no longer exists")
                }
                // Its sessions were revoked with the suspension; said plainly all the same.
                if user.suspendedAt != nil { throw Self.refused("account_suspended", "this account is suspended; contact support") }
                return user
            }
        }
    }

    /// A new session of `user`: stored, with its first tokens.
    func start(for user: User, now: Date = Date()) async throws -> Session {
        if let refusal = SuspensionOps.refusal(user) { throw refusal }
        let id = SessionID.make()
        let refresh = RefreshToken(session: id)
        let refreshExpiresAt = now + refreshLifetime
        try await store.createSession(
            SessionRecord(id: id, userID: user.id, refreshHash: refresh.hash, createdAt: now, expiresAt: refreshExpiresAt))
        return try await session(user, id: id, refresh: refresh, refreshExpiresAt: refreshExpiresAt, now: now)
    }

    private func session(_ user: User, id: String, refresh: RefreshToken, refreshExpiresAt: Date, now: Date) async throws -> Session {
        let (token, expiresAt) = try await signer.issue(for: user, session: id, now: now)
        let device = user.role == .driver ? user.deviceID.map { deviceKeys.make(session: id, deviceID: $0) } : nil
        return Session(
            token: token, expiresAt: expiresAt, refreshToken: refresh.text, refreshExpiresAt: refreshExpiresAt, user: user,
            deviceCredential: device)
    }

    static func refused(_ code: String, _ message: String) -> ServiceError { ServiceError.unauthorized(code, message) }
}
