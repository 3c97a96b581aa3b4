import Foundation
import Wire

/// A driver's phone's proof that it streams as its device: given with the driver's session
/// (`Session.device_credential`) and sent in every batch (`IngestBatch.device_credential`). It is
/// bound to the device id, the account and the session, and dies with the session (log out, a new
/// password, a revoked refresh token) or when the account names another device.
@WireModel
public struct DeviceCredential: Codable, Sendable, Equatable {
    public var deviceID: String
    public var userID: String
    public var credential: String

    public init(deviceID: String, userID: String, credential: String) {
        self.deviceID = deviceID
        self.userID = userID
        self.credential = credential
    }
}

/// `users.verify_device_credential`: does `credential` let a connection stream as `device_id`?
@WireModel
public struct VerifyDeviceCredentialParams: Codable, Sendable, Equatable {
    @WireField(pattern: TextPatterns.deviceID, meaning: TextPatterns.deviceIDMeaning)
    public var deviceID: String
    @WireField(maxLength: 256)
    public var credential: String

    public init(deviceID: String, credential: String) {
        self.deviceID = deviceID
        self.credential = credential
    }
}

/// `users.verify_device_credentials`: many `(device, credential)` pairs in one call, as tracking's
/// ingest sends them once per interval for every device it has no recent verdict about.
@WireModel
public struct VerifyDeviceCredentialsParams: Codable, Sendable, Equatable {
    /// At most `maximumPairs`: a bigger backlog waits for the next call.
    @WireField(minItems: 1, maxItems: VerifyDeviceCredentialsParams.maximumPairs)
    public var pairs: [VerifyDeviceCredentialParams]

    /// The most pairs one call may carry: users checks each against its store, and the call must
    /// be answered well within the caller's timeout.
    public static let maximumPairs = 256

    public init(pairs: [VerifyDeviceCredentialParams]) { self.pairs = pairs }
}

/// The answer about one pair: the device's driver when the credential holds, else why not (the
/// 401 codes of `verify_device_credential`: `credential_invalid`, `credential_revoked`), and
/// whether the driver may go online (`DriverApproval.problem`), which the ingest socket holds a
/// batch that asks for it to.
@WireModel
public struct DeviceCredentialVerdict: Codable, Sendable, Equatable {
    public var deviceID: String
    public var userID: String?
    public var refusal: ErrorBody?
    /// Why the driver may not go online now; absent when they may.
    public var approvalProblem: String?

    public init(deviceID: String, userID: String? = nil, refusal: ErrorBody? = nil, approvalProblem: String? = nil) {
        self.deviceID = deviceID
        self.userID = userID
        self.refusal = refusal
        self.approvalProblem = approvalProblem
    }
}

/// The verdicts of `users.verify_device_credentials`, one per pair asked about, in the same order.
@WireModel
public struct DeviceCredentialVerdicts: Codable, Sendable, Equatable {
    public var verdicts: [DeviceCredentialVerdict]
    public init(verdicts: [DeviceCredentialVerdict]) { self.verdicts = verdicts }
}
