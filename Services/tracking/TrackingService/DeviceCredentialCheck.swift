import Bus
import Foundation
import Logging
import RideContract
import RideModels
import ServiceKit
import Synchronization

/// Who says whether a device credential holds: users (`users.verify_device_credential`).
public protocol DeviceCredentialVerifier: Sendable {
    /// The device's driver. Throws a 401 `ServiceError` when the credential does not hold, anything
    /// else when it cannot be checked now.
    func driver(ofDevice deviceID: String, credential: String) async throws -> String
}

/// The verifier through the bus.
public struct UsersDeviceCredentials: DeviceCredentialVerifier {
    let client: ServiceClient

    public init(client: ServiceClient) { self.client = client }

    public func driver(ofDevice deviceID: String, credential: String) async throws -> String {
        try await client.call(Ops.Users.verifyDeviceCredential, VerifyDeviceCredentialParams(deviceID: deviceID, credential: credential), timeout: .seconds(2)).userID
    }
}

/// Whether a batch on the ingest socket may speak for its device: it must carry the device's
/// credential. Verdicts are kept per device, so users is asked about a device once a minute at
/// most: a revoked credential stops within `recheckAfter`. While users cannot answer, a credential
/// checked within `trustedWhileUnchecked` is still believed (phones keep streaming through a users
/// restart); one never checked is refused with 503 and the SDK sends again.
public final class DeviceCredentialCheck: Sendable {
    private struct Verdict {
        var credential: String
        /// The driver, or the refusal.
        var outcome: Result<String, ServiceError>
        var checkedAt: Date
    }

    private let verifier: any DeviceCredentialVerifier
    private let verdicts = Mutex<[String: Verdict]>([:])
    private let rejections = RejectionLog("device credential refused")
    private let logger: Logger
    public let recheckAfter: TimeInterval
    public let trustedWhileUnchecked: TimeInterval
    /// How long a refusal is kept: a phone resending a bad credential costs users nothing meanwhile.
    public let refusalKeptFor: TimeInterval
    /// Past this many devices, refusals are forgotten first (they are cheap to make again).
    static let capacity = 200_000

    public init(
        verifier: any DeviceCredentialVerifier, recheckAfter: TimeInterval = 60, trustedWhileUnchecked: TimeInterval = 600, refusalKeptFor: TimeInterval = 10,
        logger: Logger
    ) {
        self.verifier = verifier
        self.recheckAfter = recheckAfter
        self.trustedWhileUnchecked = trustedWhileUnchecked
        self.refusalKeptFor = refusalKeptFor
        self.logger = logger
    }

    /// The answer without asking users, when a recent verdict about this credential gives one; a
    /// refusal is logged once per device and minute.
    public func recent(deviceID: String, credential: String?, now: Date) -> Result<String, ServiceError>? {
        let outcome = known(deviceID: deviceID, credential: credential, now: now)
        if case .failure(let error)? = outcome { rejections.note(error.code, from: deviceID, logger: logger) }
        return outcome
    }

    private func known(deviceID: String, credential: String?, now: Date) -> Result<String, ServiceError>? {
        guard let credential else { return .failure(Self.missing) }
        return verdicts.withLock { verdicts in
            guard let verdict = verdicts[deviceID], verdict.credential == credential else { return nil }
            let age = now.timeIntervalSince(verdict.checkedAt)
            switch verdict.outcome {
            case .success: return age < recheckAfter ? verdict.outcome : nil
            case .failure: return age < refusalKeptFor ? verdict.outcome : nil
            }
        }
    }

    /// The device's driver, asking users when no recent verdict says; a refusal is logged once per device and minute.
    public func check(deviceID: String, credential: String?, now: Date) async -> Result<String, ServiceError> {
        let outcome = await decide(deviceID: deviceID, credential: credential, now: now)
        if case .failure(let error) = outcome, error.status == Status.unauthorized {
            rejections.note(error.code, from: deviceID, logger: logger)
        }
        return outcome
    }

    private func decide(deviceID: String, credential: String?, now: Date) async -> Result<String, ServiceError> {
        if let known = known(deviceID: deviceID, credential: credential, now: now) { return known }
        guard let credential else { return .failure(Self.missing) }
        do {
            let driver = try await verifier.driver(ofDevice: deviceID, credential: credential)
            remember(deviceID, Verdict(credential: credential, outcome: .success(driver), checkedAt: now))
            return .success(driver)
        } catch let error as ServiceError where error.status == Status.unauthorized {
            remember(deviceID, Verdict(credential: credential, outcome: .failure(error), checkedAt: now))
            return .failure(error)
        } catch {
            let believed = verdicts.withLock { verdicts -> String? in
                guard let verdict = verdicts[deviceID], verdict.credential == credential, case .success(let driver) = verdict.outcome,
                    now.timeIntervalSince(verdict.checkedAt) < trustedWhileUnchecked
                else { return nil }
                return driver
            }
            if let believed { return .success(believed) }
            return .failure(
                ServiceError(
                    status: Status.unavailable, code: "credential_unchecked",
                    message: "device \(deviceID)'s credential cannot be checked now (users did not answer); send the batch again"))
        }
    }

    private func remember(_ deviceID: String, _ verdict: Verdict) {
        verdicts.withLock { verdicts in
            if verdicts.count >= Self.capacity, verdicts[deviceID] == nil {
                verdicts = verdicts.filter { if case .success = $0.value.outcome { true } else { false } }
                if verdicts.count >= Self.capacity { verdicts.removeAll(keepingCapacity: true) }
            }
            verdicts[deviceID] = verdict
        }
    }

    static let missing = ServiceError.unauthorized(
        "credential_required", "a batch on the ingest socket must carry its device's device_credential (the driver's session gives it)")
}
