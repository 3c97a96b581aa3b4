import Bus
import Foundation
import RideContract
import RideModels
import Wire

/// The ops about drivers' device credentials. A driver's session carries one (`SessionOps`);
/// tracking asks `verify_device_credential` before it believes a phone streaming as a device;
/// `issue_device_credential` is for operators' tools on the bus (the simulator), which have no
/// password to log in with — the gateway routes nothing to it.
struct DeviceCredentialOps: Sendable {
    let store: any UserStorage
    let sessions: SessionOps

    func register(on router: inout OpRouter) {
        router.on(Ops.Users.verifyDeviceCredential) { (params: VerifyDeviceCredentialParams, _) -> DeviceCredential in
            try await verify(params, now: Date())
        }

        // Tracking's ingest asks about every device it has no recent verdict for in one call per
        // interval. A refusal is that pair's verdict; a store that cannot answer fails the whole
        // call (tracking then believes what it checked recently, and the phones send again).
        router.on(Ops.Users.verifyDeviceCredentials) { (params: VerifyDeviceCredentialsParams, _) -> DeviceCredentialVerdicts in
            var verdicts: [DeviceCredentialVerdict] = []
            for pair in params.pairs {
                do {
                    let now = Date()
                    let (credential, user) = try await verified(pair, now: now)
                    verdicts.append(
                        DeviceCredentialVerdict(
                            deviceID: pair.deviceID, userID: credential.userID,
                            approvalProblem: DriverApproval.problem(user, today: DriverApproval.day(now))))
                } catch let error as ServiceError where error.status == Status.unauthorized {
                    verdicts.append(
                        DeviceCredentialVerdict(deviceID: pair.deviceID, refusal: ErrorBody(code: error.code, message: error.message)))
                }
            }
            return DeviceCredentialVerdicts(verdicts: verdicts)
        }

        router.on(Ops.Users.issueDeviceCredential) { (params: UserIDParams, _) -> DeviceCredential in
            guard let user = try await store.user(id: params.id) else {
                throw ServiceError.notFound("unknown_user", "no user \(params.id.prefix(128))")
            }
            guard user.role == .driver, let deviceID = user.deviceID else {
                throw ServiceError.conflict("no_device", "user \(user.id) is not a driver whose account names a device")
            }
            let session = try await sessions.start(for: user)
            return DeviceCredential(deviceID: deviceID, userID: user.id, credential: session.deviceCredential ?? "")
        }
    }

    /// The device's driver when `params.credential` is genuine, for this device, and its session and account still hold.
    func verify(_ params: VerifyDeviceCredentialParams, now: Date) async throws -> DeviceCredential {
        try await verified(params, now: now).credential
    }

    /// The credential and its driver's account as it is now.
    func verified(_ params: VerifyDeviceCredentialParams, now: Date) async throws -> (credential: DeviceCredential, user: User) {
        guard let presented = DeviceCredentialKeys.parse(params.credential) else {
            throw Self.refused("credential_invalid", "the device credential is not one of ours")
        }
        guard sessions.deviceKeys.isGenuine(presented, deviceID: params.deviceID) else {
            throw Self.refused(
                "credential_invalid", "the device credential is not device \(params.deviceID)'s, or its key is no longer known")
        }
        guard let userID = try await store.liveSessionUser(presented.session, now: now) else {
            throw Self.refused(
                "credential_revoked", "the driver's session was logged out, its password changed, or it expired: sign in again")
        }
        guard let user = try await store.user(id: userID), user.role == .driver, user.deviceID == params.deviceID else {
            throw Self.refused("credential_revoked", "the driver's account no longer names device \(params.deviceID): sign in again")
        }
        return (DeviceCredential(deviceID: params.deviceID, userID: userID, credential: params.credential), user)
    }

    static func refused(_ code: String, _ message: String) -> ServiceError { ServiceError.unauthorized(code, message) }
}
