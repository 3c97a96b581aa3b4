import Bus
import Foundation
import RideContract
import RideModels
import ServiceStorage
import Storage

/// Social sign-in's ops. The gateway has verified the provider's token (signature, issuer,
/// audience, expiry): an identity here is a provider's word about who the person is, passed on the
/// trusted bus like the caller of every other op.
struct IdentityOps: Sendable {
    let store: any UserStorage
    let sessions: SessionOps
    let relay: OutboxRelay
    let reauthentication: Reauthentication
    let hasher: PasswordHasher
    let slow: SlowWork
    /// Approves a new driver where approval is automatic.
    let documents: DocumentOps

    func register(on router: inout OpRouter) {
        router.on(Ops.Users.loginWithIdentity) { (params: IdentityLoginParams, _) -> Session in
            if let user = try await store.user(identity: params.provider, subject: params.subject) {
                return try await sessions.start(for: user)
            }
            if let problem = UserRules.problem(role: params.role, car: params.car, deviceID: params.deviceID) {
                throw ServiceError.unprocessable("invalid_params", problem)
            }
            let now = Date()
            let user = User(
                id: UserID.make(params.role), role: params.role, name: params.name, phoneNumber: "", deviceID: params.deviceID,
                car: params.car, createdAt: now)
            do {
                try await store.register(
                    user, identity: LinkedIdentity(provider: params.provider, subject: params.subject, userID: user.id, createdAt: now))
            } catch UserStoreFailure.identityTaken {
                // A sign-in of the same person a moment earlier made the account: log into that one.
                guard let stored = try await store.user(identity: params.provider, subject: params.subject) else {
                    throw UserStoreFailure.identityTaken
                }
                return try await sessions.start(for: stored)
            } catch UserStoreFailure.deviceTaken {
                throw UsersOps.deviceTaken(params.deviceID ?? "")
            }
            relay.notify()
            return try await sessions.start(for: try await documents.registered(user))
        }

        // A linked identity logs in as the account: as much a takeover as a new password, so it
        // needs the same proof (a stolen access token cannot add the thief's Google account).
        router.on(Ops.Users.linkIdentity) { (params: LinkIdentityParams, _) -> Replied<LinkedIdentity> in
            guard let user = try await store.user(id: params.userID) else { throw UsersOps.unknownUser(params.userID) }
            if try await store.user(identity: params.provider, subject: params.subject)?.id != user.id {
                try await reauthentication.check(
                    currentPassword: params.currentPassword, sessionID: params.sessionID, of: user,
                    hash: try await UsersOps.passwordHash(of: user, in: store),
                    store: store, hasher: hasher, slow: slow, for: "linking an identity")
            }
            let asked = LinkedIdentity(provider: params.provider, subject: params.subject, userID: params.userID, createdAt: Date())
            do {
                let linked = try await store.link(asked)
                return Replied(status: linked == asked ? Status.created : Status.ok, body: linked)
            } catch UserStoreFailure.identityTaken {
                throw ServiceError.conflict("identity_taken", "this \(params.provider.rawValue) identity logs in another account")
            } catch UserStoreFailure.unknownUser {
                throw UsersOps.unknownUser(params.userID)
            }
        }
    }
}
