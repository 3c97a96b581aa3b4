import Bus
import Foundation
import Logging
import RideContract
import RideModels
import ServiceStorage
import Storage

/// An operator suspends an account and lifts the suspension. Suspending revokes every session in
/// the same transaction, so the account's access and refresh tokens and its driver's device
/// credential stop at once (`authenticate`, `verify_device_credential` read the sessions), and no
/// new session starts (`SessionOps.start`) until it is reinstated. The first suspension's
/// `user.suspended` (same transaction) tells the gateways and tracking to drop what they keep.
struct SuspensionOps: Sendable {
    let store: any UserStorage
    let relay: OutboxRelay
    var logger = Logger(label: "ride-users")

    func register(on router: inout OpRouter) {
        router.on(Ops.Users.suspend) { (params: SuspendParams, _) -> User in
            guard let user = try await store.setSuspension(userID: params.id, reason: params.reason, now: Date()) else {
                throw UsersOps.unknownUser(params.id)
            }
            relay.notify()
            logger.notice("account suspended", metadata: ["user_id": "\(user.id)", "reason": "\(params.reason)"])
            return user
        }
        router.on(Ops.Users.search) { (params: SearchUsersParams, _) -> People in
            People(users: try await store.users(matching: PeopleSearch(params)))
        }
        router.on(Ops.Users.reinstate) { (params: UserIDParams, _) -> User in
            guard let user = try await store.setSuspension(userID: params.id, reason: nil, now: Date()) else {
                throw UsersOps.unknownUser(params.id)
            }
            logger.notice("account reinstated", metadata: ["user_id": "\(user.id)"])
            return user
        }
    }

    /// The refusal of a session for a suspended account (after its password or identity was proven).
    static func refusal(_ user: User) -> ServiceError? {
        guard user.suspendedAt != nil else { return nil }
        return ServiceError.forbidden(
            "account_suspended", "this account is suspended (\(user.suspensionReason ?? "by an operator")); contact support")
    }
}
