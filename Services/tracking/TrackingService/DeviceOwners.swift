import Bus
import Foundation
import RideContract
import RideModels
import Synchronization

/// Who may say whose a device is. A device belongs to the driver whose account names it (users
/// keeps each `device_id` with one account), so a batch whose metadata gives the device a
/// `user_id` other than the one it has is believed only when that user's account names this
/// device: another driver cannot take a device over, and dispatch never offers one driver's rides
/// to another's phone.
public protocol DeviceOwnerLookup: Sendable {
    /// The device the account `userID` names (nil: none). Throws `ServiceError` 404 for no such
    /// account, and anything else when the answer cannot be had.
    func device(ofUser userID: String) async throws -> String?
}

/// The lookup through `users.get`.
public struct UsersDeviceOwners: DeviceOwnerLookup {
    let client: ServiceClient

    public init(client: ServiceClient) { self.client = client }

    public func device(ofUser userID: String) async throws -> String? {
        try await client.call(Ops.Users.get, UserIDParams(id: userID), timeout: .seconds(2)).deviceID
    }
}

/// The rule, apart from where the answer comes from.
public enum DeviceOwnership {
    /// The `user_id` a batch gives its device, when it is one the device does not have yet (so it must be checked).
    public static func claim(_ intents: DeviceIntents?, current: DeviceRecord?) -> String? {
        guard case .string(let userID)? = intents?.metadata?["user_id"] else { return nil }
        guard case .string(let had)? = current?.metadata["user_id"], had == userID else { return userID }
        return nil
    }

    /// Why `deviceID` may not be given to `userID` (nil: it may), asking `owners`.
    public static func problem(deviceID: String, userID: String, owners: any DeviceOwnerLookup) async -> ServiceError? {
        do {
            let named = try await owners.device(ofUser: userID)
            guard named == deviceID else {
                return .conflict(
                    "device_in_use",
                    "device \(deviceID) is not user \(userID.prefix(128))'s device: their account names \(named.map { "device \($0)" } ?? "no device")"
                )
            }
            return nil
        } catch let error as ServiceError where error.status == Status.notFound {
            return .unprocessable("unknown_user", "metadata.user_id \(userID.prefix(128)) is no account of this platform")
        } catch {
            return ServiceError(
                status: Status.unavailable, code: "owner_unavailable",
                message: "who owns device \(deviceID) cannot be checked now (users did not answer); send the batch again")
        }
    }
}
