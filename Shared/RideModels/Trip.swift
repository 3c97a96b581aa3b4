import Foundation
import Geo
import Wire

/// A trip to a destination, in the shape of HyperTrack's Trips API v3 (docs/services/trips.md).
@WireModel
public struct Trip: Codable, Sendable, Equatable {
    @WireModel
    public enum Status: String, Codable, Sendable { case active, completed }

    @WireModel
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
    }

    /// One stretch of the way left: what the driver does where it begins (`depart`, `straight`,
    /// `slight_left`, `left`, `sharp_left`, `slight_right`, `right`, `sharp_right`, `u_turn`,
    /// `arrive`), onto which street, and how many metres of it are left to drive.
    @WireModel
    public struct Step: Codable, Sendable, Equatable {
        public var name: String?
        public var manoeuvre: String
        public var distance: Int

        public init(name: String?, manoeuvre: String, distance: Int) {
            self.name = name
            self.manoeuvre = manoeuvre
            self.distance = distance
        }
    }

    @WireModel
    public struct Views: Codable, Sendable, Equatable {
        /// `/<share id>` on the gateway: the live trip, then its summary; absent for a trip made
        /// without a link (`CreateTripParams.shared`: a ride's legs).
        public var shareURL: String?
        public init(shareURL: String?) { self.shareURL = shareURL }
    }

    @WireModel
    public struct Estimate: Codable, Sendable, Equatable {
        @WireModel
        public struct Route: Codable, Sendable, Equatable {
            /// Metres left.
            public var distance: Int
            /// Seconds left.
            public var duration: Int
            public var remainingDuration: Int
            /// The way left to drive, from the device's position on the route to the destination;
            /// null for a straight-line estimate (no road data).
            public var polyline: TripSummary.LineString?
            /// Turn by turn, what is left: the stretch being driven, each after it, then `arrive`;
            /// null for a straight-line estimate.
            public var steps: [Trip.Step]?

            public init(
                distance: Int, duration: Int, remainingDuration: Int, polyline: TripSummary.LineString? = nil, steps: [Trip.Step]? = nil
            ) {
                self.distance = distance
                self.duration = duration
                self.remainingDuration = remainingDuration
                self.polyline = polyline
                self.steps = steps
            }
        }

        public var arriveAt: Date
        public var route: Route
        /// `road` (along a route from road data) or `straight_line` (the straight line × 1.3).
        public var estimateKind: String?
        /// Seconds later than the trip's first estimate (positive: late).
        public var delay: Int?

        public init(arriveAt: Date, route: Route, estimateKind: String? = nil, delay: Int? = nil) {
            self.arriveAt = arriveAt
            self.route = route
            self.estimateKind = estimateKind
            self.delay = delay
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

    public init(
        tripID: String, shareID: String, deviceID: String, status: Status, startedAt: Date, completedAt: Date? = nil,
        destination: Destination, estimate: Estimate? = nil, summary: TripSummary? = nil, metadata: [String: JSONValue]? = nil
    ) {
        self.tripID = tripID
        self.shareID = shareID
        self.deviceID = deviceID
        self.status = status
        self.startedAt = startedAt
        self.completedAt = completedAt
        self.views = Views(shareURL: ShareID.isValid(shareID) ? "/\(shareID)" : nil)
        self.destination = destination
        self.estimate = estimate
        self.summary = summary
        self.metadata = metadata
    }
}

/// What a completed trip was: the route driven (simplified), its length with GPS jitter left out,
/// how long it took, and what happened on the way.
@WireModel
public struct TripSummary: Codable, Sendable, Equatable {
    @WireModel
    public struct LineString: Codable, Sendable, Equatable {
        public var type: String = "LineString"
        /// `[longitude, latitude]` pairs.
        public var coordinates: [[Double]]
        public init(coordinates: [[Double]]) { self.coordinates = coordinates }
    }

    @WireModel
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
    /// Metres of the first route planned (the driven `distance` may differ: detours, re-routes).
    public var plannedDistance: Int?
    /// How many times the trip was re-routed (the device left the route).
    public var reroutes: Int?

    public init(
        locations: LineString, distance: Int, duration: Int, startedAt: Date, completedAt: Date, deviceID: String, markers: [Marker],
        plannedDistance: Int? = nil, reroutes: Int? = nil
    ) {
        self.plannedDistance = plannedDistance
        self.reroutes = reroutes
        self.locations = locations
        self.distance = distance
        self.duration = duration
        self.startedAt = startedAt
        self.completedAt = completedAt
        self.deviceID = deviceID
        self.markers = markers
    }
}

/// `trips.create`.
@WireModel
public struct CreateTripParams: Codable, Sendable, Equatable {
    @WireModel
    public struct Destination: Codable, Sendable, Equatable {
        public var geometry: GeoJSONPoint
        @WireField(minimum: 5, maximum: 5000)
        public var radius: Double?
        public var address: String?

        public init(geometry: GeoJSONPoint, radius: Double? = nil, address: String? = nil) {
            self.geometry = geometry
            self.radius = radius
            self.address = address
        }
    }

    @WireField(pattern: TextPatterns.deviceID, meaning: TextPatterns.deviceIDMeaning)
    public var deviceID: String
    public var destination: Destination
    public var metadata: [String: JSONValue]?
    /// A repeated create with the same key returns the first trip (orders use order id + leg).
    @WireField(minLength: 1, maxLength: 200, pattern: #"^[^\x00]*$"#, meaning: "1 to 200 characters without NUL")
    public var idempotencyKey: String?
    /// False: no share link (a ride's legs, which the ride's own link shares); absent or true: one.
    public var shared: Bool?

    public init(
        deviceID: String, destination: Destination, metadata: [String: JSONValue]? = nil, idempotencyKey: String? = nil, shared: Bool? = nil
    ) {
        self.deviceID = deviceID
        self.destination = destination
        self.metadata = metadata
        self.idempotencyKey = idempotencyKey
        self.shared = shared
    }
}

/// `trips.get`, `trips.complete`.
@WireModel
public struct TripIDParams: Codable, Sendable, Equatable {
    public var tripID: String
    public init(tripID: String) { self.tripID = tripID }
}

/// `trips.get_by_share`.
@WireModel
public struct ShareIDParams: Codable, Sendable, Equatable {
    public var shareID: String
    public init(shareID: String) { self.shareID = shareID }
}

/// `trip.*` event data, shaped like HyperTrack's trip webhook.
@WireModel
public struct TripEvent: Codable, Sendable, Equatable {
    @WireModel
    public struct Data: Codable, Sendable, Equatable {
        /// `created`, `destination_arrival`, `eta`, `rerouted`, `delayed`, `destination_changed`, `completed`.
        public var value: String
        public var tripID: String
        public var tripMetadata: [String: JSONValue]?
        public var estimate: Trip.Estimate?
        public var summary: TripSummary?
        public var arrivedAt: Date?
        /// `destination_changed` only: the trip's new destination.
        public var destination: Trip.Destination?

        public init(
            value: String, tripID: String, tripMetadata: [String: JSONValue]?, estimate: Trip.Estimate? = nil,
            summary: TripSummary? = nil, arrivedAt: Date? = nil, destination: Trip.Destination? = nil
        ) {
            self.value = value
            self.tripID = tripID
            self.tripMetadata = tripMetadata
            self.estimate = estimate
            self.summary = summary
            self.arrivedAt = arrivedAt
            self.destination = destination
        }
    }

    public var type: String = "trip"
    public var createdAt: Date
    public var deviceID: String
    public var version: String = "2.0.0"
    public var data: Data

    public init(createdAt: Date, deviceID: String, data: Data) {
        self.createdAt = createdAt
        self.deviceID = deviceID
        self.data = data
    }
}

extension TripEvent {
    /// The `order_id` of the trip's metadata, read from the event's data without decoding the rest.
    public static func orderID(in data: JSONValue) -> String? {
        data[CodingKeys.data.stringValue]?[Data.CodingKeys.tripMetadata.stringValue]?["order_id"]?.stringValue
    }
}
