import Foundation
import Geo
import Wire

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
