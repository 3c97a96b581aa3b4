import Foundation
import Geo
import Wire

/// One location fix as a device reports it (HyperTrack's location shape, flattened).
@WireModel
public struct DeviceLocation: Codable, Sendable, Equatable {
    public var latitude: Double
    public var longitude: Double
    public var recordedAt: Date
    /// Horizontal accuracy in metres (radius of 68% confidence).
    public var accuracy: Double?
    /// Metres per second.
    public var speed: Double?
    /// Degrees clockwise from north, 0..<360.
    public var bearing: Double?
    public var altitude: Double?
    /// The fix came from a simulated source (a route, a GPX replay).
    public var mocked: Bool?

    public init(
        latitude: Double, longitude: Double, recordedAt: Date, accuracy: Double? = nil, speed: Double? = nil,
        bearing: Double? = nil, altitude: Double? = nil, mocked: Bool? = nil
    ) {
        self.latitude = latitude
        self.longitude = longitude
        self.recordedAt = recordedAt
        self.accuracy = accuracy
        self.speed = speed
        self.bearing = bearing
        self.altitude = altitude
        self.mocked = mocked
    }

    public var point: GeoPoint { GeoPoint(latitude: latitude, longitude: longitude) }
}

/// A geotag: metadata pinned to where the device was.
@WireModel
public struct GeotagRecord: Codable, Sendable, Equatable {
    public var metadata: [String: JSONValue]
    public var location: DeviceLocation

    public init(metadata: [String: JSONValue], location: DeviceLocation) {
        self.metadata = metadata
        self.location = location
    }
}

/// What a device wants: its name and metadata, and the tracking and availability intents, with the
/// time they last changed (the newer side wins when device and server disagree).
@WireModel
public struct DeviceIntents: Codable, Sendable, Equatable {
    public var name: String?
    public var metadata: [String: JSONValue]?
    public var tracking: Bool?
    public var available: Bool?
    public var changedAt: Date?

    public init(name: String? = nil, metadata: [String: JSONValue]? = nil, tracking: Bool? = nil, available: Bool? = nil, changedAt: Date? = nil) {
        self.name = name
        self.metadata = metadata
        self.tracking = tracking
        self.available = available
        self.changedAt = changedAt
    }
}

/// A batch of locations from one device: the frame `["batch"][JSON]` on the ingest socket, or the
/// parameters of the `tracking.ingest` op (which also names the device).
@WireModel
public struct IngestBatch: Codable, Sendable, Equatable {
    @WireField(maxLength: 256)
    public var publishableKey: String
    /// The device's credential (`DeviceCredential`), from its driver's session: required on the
    /// ingest socket unless tracking runs with `--device-credentials off`.
    @WireField(maxLength: 256)
    public var deviceCredential: String?
    /// The device the batch speaks for: required on the `ingest` op and on the ingest socket. The
    /// socket's routing id names a connection, never a device (anyone may present any id), so an
    /// old client that leaves this out is refused rather than taken at its routing id: that id was
    /// the public device id, which with `ZMQ_ROUTER_HANDOVER` lets a stranger take its connection.
    @WireField(pattern: TextPatterns.deviceID, meaning: TextPatterns.deviceIDMeaning)
    public var deviceID: String?
    /// Per device and increasing; a batch sent again keeps its id (locations are idempotent anyway).
    public var batchID: UInt64
    public var device: DeviceIntents?
    public var locations: [DeviceLocation]
    public var geotags: [GeotagRecord]?
    /// The device's sync (`HyperTrack.sync()`, or a `sync` command): the ack then says whether the
    /// platform wants the device tracked (`platform_tracking`), and the SDK obeys.
    public var sync: Bool?

    public init(
        publishableKey: String, deviceCredential: String? = nil, deviceID: String? = nil, batchID: UInt64, device: DeviceIntents? = nil,
        locations: [DeviceLocation], geotags: [GeotagRecord]? = nil, sync: Bool? = nil
    ) {
        self.publishableKey = publishableKey
        self.deviceCredential = deviceCredential
        self.deviceID = deviceID
        self.batchID = batchID
        self.device = device
        self.locations = locations
        self.geotags = geotags
        self.sync = sync
    }
}

/// One item of a batch that was refused, and why. The good items of the batch still count.
@WireModel
public struct RejectedItem: Codable, Sendable, Equatable {
    /// `location` or `geotag`.
    public var kind: String
    public var index: Int
    /// The field at fault, e.g. `locations[3].latitude`.
    public var field: String
    public var reason: String

    public init(kind: String, index: Int, field: String, reason: String) {
        self.kind = kind
        self.index = index
        self.field = field
        self.reason = reason
    }
}

/// The answer to a batch, sent once its locations are stored: the SDK can forget them.
@WireModel
public struct IngestAck: Codable, Sendable, Equatable {
    public var batchID: UInt64
    public var accepted: Int
    public var rejected: [RejectedItem]
    /// The device's intents as the server has them now (a newer server-side change wins).
    public var device: DeviceIntents
    /// Whether the platform wants the device tracked — true while its driver has a ride (the last
    /// tracking command published for it was `start_tracking`): on a sync's ack always, on every
    /// other ack once a command was published for the device (with `platformTrackingAt`).
    public var platformTracking: Bool?
    /// When that command was issued. A device that missed the command (lost on its way, or sent
    /// while no connection spoke for it) obeys it from the ack when it is newer than the device's
    /// last tracking change — the rule a command is obeyed by.
    public var platformTrackingAt: Date?

    public init(
        batchID: UInt64, accepted: Int, rejected: [RejectedItem], device: DeviceIntents, platformTracking: Bool? = nil, platformTrackingAt: Date? = nil
    ) {
        self.batchID = batchID
        self.accepted = accepted
        self.rejected = rejected
        self.device = device
        self.platformTracking = platformTracking
        self.platformTrackingAt = platformTrackingAt
    }
}

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

/// The ingest socket's frames: device → tracking `["batch"][IngestBatch]`; tracking → device
/// `["ack"][IngestAck]`, `["error"][{"error":{…},"batch_id"?}]`, `["command"][DeviceCommandEvent]`.
public enum IngestFrame {
    public static let batch = "batch"
    public static let ack = "ack"
    public static let error = "error"
    public static let command = "command"
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

/// Parameters of `tracking.nearby` (HyperTrack's Nearby API, v3 form).
@WireModel
public struct NearbyQuery: Codable, Sendable, Equatable {
    public var location: GeoJSONPoint
    /// Metres.
    @WireField(maximum: 20_037_509, exclusiveMinimum: 0)
    public var radius: Double
    @WireField(minimum: 1, maximum: 1000)
    public var limit: Int?
    public var availableOnly: Bool?
    /// Hours since the device's last location, as HyperTrack's `last_updated_within`.
    @WireField(exclusiveMinimum: 0)
    public var lastUpdatedWithin: Double?
    /// Devices whose metadata contains all of these keys and values.
    public var metadata: [String: JSONValue]?
    /// Only these devices.
    public var devices: [String]?

    /// Devices answered when the query gives no `limit`.
    public static let defaultLimit = 10

    public init(
        location: GeoJSONPoint, radius: Double, limit: Int? = nil, availableOnly: Bool? = nil, lastUpdatedWithin: Double? = nil,
        metadata: [String: JSONValue]? = nil, devices: [String]? = nil
    ) {
        self.location = location
        self.radius = radius
        self.limit = limit
        self.availableOnly = availableOnly
        self.lastUpdatedWithin = lastUpdatedWithin
        self.metadata = metadata
        self.devices = devices
    }
}

@WireModel
public struct NearbyDevice: Codable, Sendable, Equatable {
    public var deviceID: String
    public var name: String?
    /// Metres from the query's point.
    public var distance: Double
    public var location: GeoJSONPoint
    public var available: Bool
    public var tracking: Bool
    public var lastSeen: Date?
    public var metadata: [String: JSONValue]
    /// Degrees clockwise from north, of the device's latest fix when it had one.
    public var bearing: Double?

    public init(
        deviceID: String, name: String?, distance: Double, location: GeoJSONPoint, available: Bool, tracking: Bool,
        lastSeen: Date?, metadata: [String: JSONValue], bearing: Double? = nil
    ) {
        self.deviceID = deviceID
        self.name = name
        self.distance = distance
        self.location = location
        self.available = available
        self.tracking = tracking
        self.lastSeen = lastSeen
        self.metadata = metadata
        self.bearing = bearing
    }
}

@WireModel
public struct NearbyResult: Codable, Sendable, Equatable {
    public var devices: [NearbyDevice]
    public init(devices: [NearbyDevice]) { self.devices = devices }
}

/// A device's latest location, as `tracking.device` returns it.
@WireModel
public struct LatestLocation: Codable, Sendable, Equatable {
    public var geometry: GeoJSONPoint
    public var accuracy: Double?
    public var speed: Double?
    public var bearing: Double?
    public var recordedAt: Date

    public init(_ location: DeviceLocation) {
        geometry = GeoJSONPoint(location.point)
        accuracy = location.accuracy
        speed = location.speed
        bearing = location.bearing
        recordedAt = location.recordedAt
    }
}

/// `tracking.device`: everything the server knows about one device.
@WireModel
public struct DeviceInfo: Codable, Sendable, Equatable {
    public var deviceID: String
    public var name: String?
    public var metadata: [String: JSONValue]
    public var available: Bool
    public var tracking: Bool
    public var status: DeviceActivity
    public var lastSeen: Date?
    public var location: LatestLocation?

    public init(
        deviceID: String, name: String?, metadata: [String: JSONValue], available: Bool, tracking: Bool,
        status: DeviceActivity, lastSeen: Date?, location: LatestLocation?
    ) {
        self.deviceID = deviceID
        self.name = name
        self.metadata = metadata
        self.available = available
        self.tracking = tracking
        self.status = status
        self.lastSeen = lastSeen
        self.location = location
    }
}

@WireModel
public struct DeviceParams: Codable, Sendable, Equatable {
    public var deviceID: String
    public init(deviceID: String) { self.deviceID = deviceID }
}

@WireModel
public struct SetAvailabilityParams: Codable, Sendable, Equatable {
    public var deviceID: String
    public var available: Bool
    public init(deviceID: String, available: Bool) {
        self.deviceID = deviceID
        self.available = available
    }
}

/// `tracking.locations`: a device's history in a time range, oldest first.
@WireModel
public struct LocationsParams: Codable, Sendable, Equatable {
    public var deviceID: String
    public var from: Date?
    public var to: Date?
    public var limit: Int?

    public init(deviceID: String, from: Date? = nil, to: Date? = nil, limit: Int? = nil) {
        self.deviceID = deviceID
        self.from = from
        self.to = to
        self.limit = limit
    }
}

@WireModel
public struct LocationHistory: Codable, Sendable, Equatable {
    public var deviceID: String
    public var locations: [DeviceLocation]
    public var geotags: [GeotagRecord]

    public init(deviceID: String, locations: [DeviceLocation], geotags: [GeotagRecord]) {
        self.deviceID = deviceID
        self.locations = locations
        self.geotags = geotags
    }
}
