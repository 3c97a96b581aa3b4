import Bus
import Foundation
import Logging
import RideContract
import RideModels
import ServiceKit
import Synchronization

/// A device credential as a batch presents it, the question asked of users.
public struct CredentialPair: Hashable, Sendable {
    public var deviceID: String
    public var credential: String

    public init(deviceID: String, credential: String) {
        self.deviceID = deviceID
        self.credential = credential
    }
}

/// Whose credential a batch carries: the driver, and why they may not go online now (nil: they may).
public struct CredentialHolder: Sendable, Equatable {
    public var driver: String
    public var approvalProblem: String?

    public init(driver: String, approvalProblem: String? = nil) {
        self.driver = driver
        self.approvalProblem = approvalProblem
    }
}

/// Who says whether device credentials hold: users (`users.verify_device_credentials`).
public protocol DeviceCredentialVerifier: Sendable {
    /// A verdict per pair, in order: the device's driver, or the 401 `ServiceError` saying why the
    /// credential does not hold. Throws when users cannot answer now.
    func verdicts(_ pairs: [CredentialPair]) async throws -> [Result<CredentialHolder, ServiceError>]
}

/// The verifier through the bus: one call for all the pairs.
public struct UsersDeviceCredentials: DeviceCredentialVerifier {
    let client: ServiceClient

    public init(client: ServiceClient) { self.client = client }

    public func verdicts(_ pairs: [CredentialPair]) async throws -> [Result<CredentialHolder, ServiceError>] {
        let params = VerifyDeviceCredentialsParams(
            pairs: pairs.map { VerifyDeviceCredentialParams(deviceID: $0.deviceID, credential: $0.credential) })
        let reply = try await client.call(Ops.Users.verifyDeviceCredentials, params, timeout: .seconds(2))
        guard reply.verdicts.count == pairs.count else {
            throw ServiceError(
                status: Status.unavailable, code: "bad_reply",
                message: "users answered \(reply.verdicts.count) verdicts for \(pairs.count) pairs")
        }
        return zip(pairs, reply.verdicts).map { pair, verdict in
            if let refusal = verdict.refusal { return .failure(.unauthorized(refusal.error.code, refusal.error.message)) }
            // A verdict about another device, or without a driver, believes nothing (503: sent again).
            guard verdict.deviceID == pair.deviceID, let driver = verdict.userID else {
                return .failure(DeviceCredentialCheck.unchecked(pair.deviceID, why: "users answered about another device"))
            }
            return .success(CredentialHolder(driver: driver, approvalProblem: verdict.approvalProblem))
        }
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
        var outcome: Result<CredentialHolder, ServiceError>
        var checkedAt: Date
    }

    /// A device's last acceptance and last refusal, kept apart: a stranger's bad credential for a
    /// device must not make the device's own good one be asked about again at each batch.
    private struct DeviceVerdicts {
        var accepted: Verdict?
        var refused: Verdict?
    }

    private let verifier: any DeviceCredentialVerifier
    private let verdicts = Mutex<[String: DeviceVerdicts]>([:])
    private let rejections = RejectionLog("device credential refused")
    private let logger: Logger
    public let recheckAfter: TimeInterval
    public let trustedWhileUnchecked: TimeInterval
    /// How long a refusal is kept: a phone resending a bad credential costs users nothing meanwhile.
    public let refusalKeptFor: TimeInterval
    /// Past this many devices, refusals are forgotten first (they are cheap to make again).
    static let capacity = 200_000

    public init(
        verifier: any DeviceCredentialVerifier, recheckAfter: TimeInterval = 60, trustedWhileUnchecked: TimeInterval = 600,
        refusalKeptFor: TimeInterval = 10,
        logger: Logger
    ) {
        self.verifier = verifier
        self.recheckAfter = recheckAfter
        self.trustedWhileUnchecked = trustedWhileUnchecked
        self.refusalKeptFor = refusalKeptFor
        self.logger = logger
    }

    /// Forgets every acceptance of `userID`'s credentials (their account was suspended): the
    /// device's next batch asks users, who refuse it.
    public func forget(userID: String) {
        verdicts.withLock { verdicts in
            for (device, kept) in verdicts where (try? kept.accepted?.outcome.get())?.driver == userID { verdicts[device]?.accepted = nil }
        }
    }

    /// The answer without asking users, when a recent verdict about this credential gives one; a
    /// refusal is logged once per device and minute.
    public func recent(deviceID: String, credential: String?, now: Date) -> Result<CredentialHolder, ServiceError>? {
        let outcome = known(deviceID: deviceID, credential: credential, now: now)
        if case .failure(let error)? = outcome { rejections.note(error.code, from: deviceID, logger: logger) }
        return outcome
    }

    private func known(deviceID: String, credential: String?, now: Date) -> Result<CredentialHolder, ServiceError>? {
        guard let credential else { return .failure(Self.missing) }
        return verdicts.withLock { verdicts in
            let device = verdicts[deviceID]
            if let accepted = device?.accepted, accepted.credential == credential, now.timeIntervalSince(accepted.checkedAt) < recheckAfter
            {
                return accepted.outcome
            }
            if let refused = device?.refused, refused.credential == credential, now.timeIntervalSince(refused.checkedAt) < refusalKeptFor {
                return refused.outcome
            }
            return nil
        }
    }

    /// The device's driver, asking users when no recent verdict says; a refusal is logged once per device and minute.
    public func check(deviceID: String, credential: String?, now: Date) async -> Result<CredentialHolder, ServiceError> {
        if let known = known(deviceID: deviceID, credential: credential, now: now) { return noted(known, deviceID) }
        guard let credential else { return noted(.failure(Self.missing), deviceID) }
        return await check([CredentialPair(deviceID: deviceID, credential: credential)], now: now)[0]
    }

    /// The verdicts about `pairs`, from ONE question to users (the pairs tracking had no recent
    /// verdict about); refusals are logged once per device and minute.
    public func check(_ pairs: [CredentialPair], now: Date) async -> [Result<CredentialHolder, ServiceError>] {
        do {
            let answers = try await verifier.verdicts(pairs)
            return zip(pairs, answers).map { pair, answer in
                switch answer {
                case .success:
                    remember(pair.deviceID, Verdict(credential: pair.credential, outcome: answer, checkedAt: now))
                case .failure(let error) where error.status == Status.unauthorized:
                    remember(pair.deviceID, Verdict(credential: pair.credential, outcome: answer, checkedAt: now))
                case .failure:
                    break
                }
                return noted(answer, pair.deviceID)
            }
        } catch {
            return pairs.map { believed($0, now: now) }
        }
    }

    /// While users cannot answer: a credential checked within `trustedWhileUnchecked` is believed.
    private func believed(_ pair: CredentialPair, now: Date) -> Result<CredentialHolder, ServiceError> {
        let holder = verdicts.withLock { verdicts -> CredentialHolder? in
            guard let verdict = verdicts[pair.deviceID]?.accepted, verdict.credential == pair.credential,
                case .success(let driver) = verdict.outcome,
                now.timeIntervalSince(verdict.checkedAt) < trustedWhileUnchecked
            else { return nil }
            return driver
        }
        if let holder { return .success(holder) }
        return .failure(Self.unchecked(pair.deviceID, why: "users did not answer"))
    }

    private func noted(_ outcome: Result<CredentialHolder, ServiceError>, _ deviceID: String) -> Result<CredentialHolder, ServiceError> {
        if case .failure(let error) = outcome, error.status == Status.unauthorized {
            rejections.note(error.code, from: deviceID, logger: logger)
        }
        return outcome
    }

    /// 503: the SDK keeps the batch and sends it again on its backoff.
    static func unchecked(_ deviceID: String, why: String) -> ServiceError {
        ServiceError(
            status: Status.unavailable, code: "credential_unchecked",
            message: "device \(deviceID)'s credential cannot be checked now (\(why)); send the batch again")
    }

    private func remember(_ deviceID: String, _ verdict: Verdict) {
        verdicts.withLock { verdicts in
            if verdicts.count >= Self.capacity, verdicts[deviceID] == nil {
                verdicts = verdicts.compactMapValues { $0.accepted.map { DeviceVerdicts(accepted: $0) } }
                if verdicts.count >= Self.capacity { verdicts.removeAll(keepingCapacity: true) }
            }
            var device = verdicts[deviceID] ?? DeviceVerdicts()
            switch verdict.outcome {
            case .success:
                device.accepted = verdict
                if device.refused?.credential == verdict.credential { device.refused = nil }
            case .failure:
                device.refused = verdict
                // A revoked credential is no longer believed, not even while users is away.
                if device.accepted?.credential == verdict.credential { device.accepted = nil }
            }
            verdicts[deviceID] = device
        }
    }

    static let missing = ServiceError.unauthorized(
        "credential_required", "a batch on the ingest socket must carry its device's device_credential (the driver's session gives it)")
}
