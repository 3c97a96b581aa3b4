import Foundation
import Geo
import Wire

/// Silent-push commands to a driver's SDK (`device.command.<device_id>`).
@WireModel
public enum DeviceCommand: String, Codable, Sendable {
    case startTracking = "start_tracking"
    case stopTracking = "stop_tracking"
    case sync
}

@WireModel
public struct DeviceCommandEvent: Codable, Sendable, Equatable {
    public var command: DeviceCommand
    /// When the change behind the command happened (a ride accepted, ended): commands can arrive out
    /// of order — the stop of a driver's last ride after the start of the next — and a device obeys
    /// a tracking command only when it is newer than its last tracking change.
    public var issuedAt: Date?

    public init(command: DeviceCommand, issuedAt: Date? = nil) {
        self.command = command
        self.issuedAt = issuedAt
    }
}

/// `device.location.<device_id>` (docs/design.md).
@WireModel
public struct DeviceLocationEvent: Codable, Sendable, Equatable {
    public var deviceID: String
    public var location: GeoJSONPoint
    public var speed: Double?
    public var accuracy: Double?
    public var bearing: Double?
    public var recordedAt: Date

    public init(deviceID: String, location: DeviceLocation) {
        self.deviceID = deviceID
        self.location = GeoJSONPoint(location.point)
        self.speed = location.speed
        self.accuracy = location.accuracy
        self.bearing = location.bearing
        self.recordedAt = location.recordedAt
    }
}

@WireModel
public enum DeviceActivity: String, Codable, Sendable {
    case active, inactive
}

/// `device.status.<device_id>` (docs/design.md).
@WireModel
public struct DeviceStatusEvent: Codable, Sendable, Equatable {
    public var deviceID: String
    public var value: DeviceActivity
    public var available: Bool
    public var reason: String?

    public init(deviceID: String, value: DeviceActivity, available: Bool, reason: String? = nil) {
        self.deviceID = deviceID
        self.value = value
        self.available = available
        self.reason = reason
    }
}

extension DeviceLocationEvent {
    /// The device's id, read from the event's data without decoding the rest: a subscriber that
    /// routes by device decodes only what it passes on.
    public static func deviceID(in data: JSONValue) -> String? { data[CodingKeys.deviceID.stringValue]?.stringValue }
}

extension DeviceStatusEvent {
    /// The device's id, read without decoding the rest (as `DeviceLocationEvent.deviceID(in:)`).
    public static func deviceID(in data: JSONValue) -> String? { data[CodingKeys.deviceID.stringValue]?.stringValue }
}
