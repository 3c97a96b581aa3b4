import Bus
import Foundation
import RideModels

/// The proof a change of password or phone number needs beyond the access token: the account's
/// current password, or a session that logged in within `window` (as Firebase's
/// "requires-recent-login"). A token can be stolen (a shared phone, a leaked log); the password it
/// would take to log in is what keeps the account its owner's, and an account that signs in with
/// Apple, Google or Facebook proves itself by signing in again. Every refusal is a 403 with its own
/// code, and the change is not made.
struct Reauthentication: Sendable {
    /// How long after its log-in a session may change them without the current password (0: never).
    let window: TimeInterval

    static let defaultWindow: TimeInterval = 300

    /// Checks the proof of `changes` to `user`'s account. `hash`: the stored password hash (nil
    /// when the account has none).
    func check(
        _ changes: UpdateUserParams, of user: User, hash: String?, store: any UserStorage, hasher: PasswordHasher, slow: SlowWork,
        now: Date = Date()
    ) async throws {
        guard changes.needsCurrentPassword(of: user) else { return }
        try await check(
            currentPassword: changes.currentPassword, sessionID: changes.sessionID, of: user, hash: hash, store: store, hasher: hasher,
            slow: slow, now: now,
            for: "a new password or phone number")
    }

    /// Checks the proof for a change `what` (a new password, a linked identity) of `user`'s account:
    /// `currentPassword` against `hash`, else a log-in of `sessionID` within the window.
    func check(
        currentPassword: String?, sessionID: String?, of user: User, hash: String?, store: any UserStorage, hasher: PasswordHasher,
        slow: SlowWork,
        now: Date = Date(), for what: String
    ) async throws {
        if let presented = currentPassword, !presented.isEmpty {
            guard let hash, try await slow.run({ hasher.verify(presented, against: hash) }) else {
                throw ServiceError.forbidden("current_password_wrong", "current_password is not this account's password")
            }
            return
        }
        if window > 0, let session = sessionID, let loggedIn = try await store.loggedIn(session: session, user: user.id),
            now.timeIntervalSince(loggedIn) <= window
        {
            return
        }
        let logIn = hash == nil ? "sign in again with Apple, Google or Facebook" : "give current_password, or log in again"
        let proof = window > 0 ? "\(logIn) and change it within \(Int(window)) s" : "give current_password"
        throw ServiceError.forbidden("reauthentication_required", "\(what) needs proof beyond the access token: \(proof)")
    }
}
