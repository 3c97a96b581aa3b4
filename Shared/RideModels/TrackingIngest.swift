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

    public init(
        name: String? = nil, metadata: [String: JSONValue]? = nil, tracking: Bool? = nil, available: Bool? = nil, changedAt: Date? = nil
    ) {
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
        batchID: UInt64, accepted: Int, rejected: [RejectedItem], device: DeviceIntents, platformTracking: Bool? = nil,
        platformTrackingAt: Date? = nil
    ) {
        self.batchID = batchID
        self.accepted = accepted
        self.rejected = rejected
        self.device = device
        self.platformTracking = platformTracking
        self.platformTrackingAt = platformTrackingAt
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
