import Bus
import Foundation
import Geo

/// A trip to a destination, in the shape of HyperTrack's Trips API v3 (`reference/hypertrack-api.md`).
public struct Trip: Codable, Sendable, Equatable {
    public enum Status: String, Codable, Sendable { case active, completed }

    public struct Destination: Codable, Sendable, Equatable {
        public var geometry: GeoJSONPoint
        /// Metres.
        public var radius: Double
        public var address: String?
        public var arrivedAt: Date?

        public init(geometry: GeoJSONPoint, radius: Double, address: String? = nil, arrivedAt: Date? = nil) {
            self.geometry = geometry
            self.radius = radius
            self.address = address
            self.arrivedAt = arrivedAt
        }

        enum CodingKeys: String, CodingKey {
            case geometry, radius, address
            case arrivedAt = "arrived_at"
        }
    }

    public struct Views: Codable, Sendable, Equatable {
        /// `/<share id>` on the gateway: the live trip, then its summary.
        public var shareURL: String
        public init(shareURL: String) { self.shareURL = shareURL }
        enum CodingKeys: String, CodingKey { case shareURL = "share_url" }
    }

    public struct Estimate: Codable, Sendable, Equatable {
        public struct Route: Codable, Sendable, Equatable {
            public var distance: Int
            public var duration: Int
            public var remainingDuration: Int

            public init(distance: Int, duration: Int, remainingDuration: Int) {
                self.distance = distance
                self.duration = duration
                self.remainingDuration = remainingDuration
            }

            enum CodingKeys: String, CodingKey {
                case distance, duration
                case remainingDuration = "remaining_duration"
            }
        }

        public var arriveAt: Date
        public var route: Route

        public init(arriveAt: Date, route: Route) {
            self.arriveAt = arriveAt
            self.route = route
        }

        enum CodingKeys: String, CodingKey {
            case route
            case arriveAt = "arrive_at"
        }
    }

    public var tripID: String
    public var shareID: String
    public var deviceID: String
    public var status: Status
    public var startedAt: Date
    public var completedAt: Date?
    public var views: Views
    public var destination: Destination
    public var estimate: Estimate?
    public var summary: TripSummary?
    public var metadata: [String: JSONValue]?

    public init(tripID: String, shareID: String, deviceID: String, status: Status, startedAt: Date, completedAt: Date? = nil,
                destination: Destination, estimate: Estimate? = nil, summary: TripSummary? = nil, metadata: [String: JSONValue]? = nil) {
        self.tripID = tripID
        self.shareID = shareID
        self.deviceID = deviceID
        self.status = status
        self.startedAt = startedAt
        self.completedAt = completedAt
        self.views = Views(shareURL: "/\(shareID)")
        self.destination = destination
        self.estimate = estimate
        self.summary = summary
        self.metadata = metadata
    }

    enum CodingKeys: String, CodingKey {
        case status, views, destination, estimate, summary, metadata
        case tripID = "trip_id"
        case shareID = "share_id"
        case deviceID = "device_id"
        case startedAt = "started_at"
        case completedAt = "completed_at"
    }
}

/// What a completed trip was: the route driven (simplified), its length with GPS jitter left out,
/// how long it took, and what happened on the way.
public struct TripSummary: Codable, Sendable, Equatable {
    public struct LineString: Codable, Sendable, Equatable {
        public var type = "LineString"
        /// `[longitude, latitude]` pairs.
        public var coordinates: [[Double]]
        public init(coordinates: [[Double]]) { self.coordinates = coordinates }
    }

    public struct Marker: Codable, Sendable, Equatable {
        /// `arrival` (entered the destination's geofence).
        public var type: String
        public var recordedAt: Date
        public var location: GeoJSONPoint

        public init(type: String, recordedAt: Date, location: GeoJSONPoint) {
            self.type = type
            self.recordedAt = recordedAt
            self.location = location
        }

        enum CodingKeys: String, CodingKey {
            case type, location
            case recordedAt = "recorded_at"
        }
    }

    public var locations: LineString
    /// Metres.
    public var distance: Int
    /// Seconds.
    public var duration: Int
    public var startedAt: Date
    public var completedAt: Date
    public var deviceID: String
    public var markers: [Marker]

    public init(locations: LineString, distance: Int, duration: Int, startedAt: Date, completedAt: Date, deviceID: String, markers: [Marker]) {
        self.locations = locations
        self.distance = distance
        self.duration = duration
        self.startedAt = startedAt
        self.completedAt = completedAt
        self.deviceID = deviceID
        self.markers = markers
    }

    enum CodingKeys: String, CodingKey {
        case locations, distance, duration, markers
        case startedAt = "started_at"
        case completedAt = "completed_at"
        case deviceID = "device_id"
    }
}

/// `trips.create`.
public struct CreateTripParams: Codable, Sendable, Equatable {
    public struct Destination: Codable, Sendable, Equatable {
        public var geometry: GeoJSONPoint
        public var radius: Double?
        public var address: String?

        public init(geometry: GeoJSONPoint, radius: Double? = nil, address: String? = nil) {
            self.geometry = geometry
            self.radius = radius
            self.address = address
        }
    }

    public var deviceID: String
    public var destination: Destination
    public var metadata: [String: JSONValue]?
    /// A repeated create with the same key returns the first trip (orders use order id + leg).
    public var idempotencyKey: String?

    public init(deviceID: String, destination: Destination, metadata: [String: JSONValue]? = nil, idempotencyKey: String? = nil) {
        self.deviceID = deviceID
        self.destination = destination
        self.metadata = metadata
        self.idempotencyKey = idempotencyKey
    }

    enum CodingKeys: String, CodingKey {
        case destination, metadata
        case deviceID = "device_id"
        case idempotencyKey = "idempotency_key"
    }
}

/// `trips.get`, `trips.complete`.
public struct TripIDParams: Codable, Sendable, Equatable {
    public var tripID: String
    public init(tripID: String) { self.tripID = tripID }
    enum CodingKeys: String, CodingKey { case tripID = "trip_id" }
}

/// `trips.get_by_share`.
public struct ShareIDParams: Codable, Sendable, Equatable {
    public var shareID: String
    public init(shareID: String) { self.shareID = shareID }
    enum CodingKeys: String, CodingKey { case shareID = "share_id" }
}

/// `trip.*` event data, shaped like HyperTrack's trip webhook.
public struct TripEvent: Codable, Sendable, Equatable {
    public struct Data: Codable, Sendable, Equatable {
        /// `created`, `destination_arrival`, `eta`, `completed`.
        public var value: String
        public var tripID: String
        public var tripMetadata: [String: JSONValue]?
        public var estimate: Trip.Estimate?
        public var summary: TripSummary?
        public var arrivedAt: Date?

        public init(value: String, tripID: String, tripMetadata: [String: JSONValue]?, estimate: Trip.Estimate? = nil,
                    summary: TripSummary? = nil, arrivedAt: Date? = nil) {
            self.value = value
            self.tripID = tripID
            self.tripMetadata = tripMetadata
            self.estimate = estimate
            self.summary = summary
            self.arrivedAt = arrivedAt
        }

        enum CodingKeys: String, CodingKey {
            case value, estimate, summary
            case tripID = "trip_id"
            case tripMetadata = "trip_metadata"
            case arrivedAt = "arrived_at"
        }
    }

    public var type = "trip"
    public var createdAt: Date
    public var deviceID: String
    public var version = "2.0.0"
    public var data: Data

    public init(createdAt: Date, deviceID: String, data: Data) {
        self.createdAt = createdAt
        self.deviceID = deviceID
        self.data = data
    }

    enum CodingKeys: String, CodingKey {
        case type, version, data
        case createdAt = "created_at"
        case deviceID = "device_id"
    }
}

/// The data of an event of the ride's lifecycle, decoded once from the bus: an order's status
/// change (`order.status.*`), a trip's arrival, or another trip event. The orders reactor, the
/// simulator and the lifecycle benchmark follow these.
public enum LifecycleEvent: Decodable, Sendable, Equatable {
    case order(OrderStatusChanged)
    case arrival(TripEvent)
    /// Any other event of `orders` or `trips` (chat, ratings, offers, payments, other trip events).
    case other

    private enum Keys: String, CodingKey { case order, data }
    private struct TripValue: Decodable { var value: String }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Keys.self)
        if container.contains(.order) {
            self = .order(try OrderStatusChanged(from: decoder))
        } else if container.contains(.data), try container.decode(TripValue.self, forKey: .data).value == "destination_arrival" {
            self = .arrival(try TripEvent(from: decoder))
        } else {
            self = .other
        }
    }
}
