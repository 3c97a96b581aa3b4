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

    enum CodingKeys: String, CodingKey {
        case credential
        case deviceID = "device_id"
        case userID = "user_id"
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

    enum CodingKeys: String, CodingKey {
        case credential
        case deviceID = "device_id"
    }
}
