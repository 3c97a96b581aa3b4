import Foundation
import Wire

/// `orders.nearby_cars`: the available cars near a point, for a rider before booking; with a
/// dropoff, the fare of a trip from that point too.
@WireModel
public struct NearbyCarsParams: Codable, Sendable, Equatable {
    public var caller: Caller
    /// Where the rider would be picked up.
    @WireField(minimum: -90, maximum: 90)
    public var latitude: Double
    @WireField(minimum: -180, maximum: 180)
    public var longitude: Double
    /// Metres around the point; 3000 when absent.
    @WireField(maximum: 10_000, exclusiveMinimum: 0)
    public var radius: Double?
    /// With `dropoff_longitude`: the reply quotes a trip from the point to there.
    @WireField(minimum: -90, maximum: 90)
    public var dropoffLatitude: Double?
    @WireField(minimum: -180, maximum: 180)
    public var dropoffLongitude: Double?

    public static let defaultRadius = 3000.0
    /// The most cars one answer shows (the nearest).
    public static let maxCars = 20

    public init(
        caller: Caller, latitude: Double, longitude: Double, radius: Double? = nil, dropoffLatitude: Double? = nil,
        dropoffLongitude: Double? = nil
    ) {
        self.caller = caller
        self.latitude = latitude
        self.longitude = longitude
        self.radius = radius
        self.dropoffLatitude = dropoffLatitude
        self.dropoffLongitude = dropoffLongitude
    }
}

/// A car as a rider sees it before booking: where it is and which way it faces, nothing about
/// who drives it.
@WireModel
public struct NearbyCar: Codable, Sendable, Equatable {
    public var latitude: Double
    public var longitude: Double
    /// Degrees clockwise from north, when the car's phone reported one.
    public var bearing: Double?

    public init(latitude: Double, longitude: Double, bearing: Double? = nil) {
        self.latitude = latitude
        self.longitude = longitude
        self.bearing = bearing
    }
}

/// The reply of `orders.nearby_cars`: the cars nearest first, how many, how long the nearest
/// would take to reach the point (the route model of fare estimates), and the quote when a dropoff
/// was given.
@WireModel
public struct NearbyCars: Codable, Sendable, Equatable {
    public var count: Int
    public var cars: [NearbyCar]
    /// Seconds for the nearest car to reach the point; absent without cars.
    @WireKey("pickup_eta_s") public var pickupETASeconds: Int?
    /// Metres of road from the nearest car to the point; absent without cars.
    @WireKey("pickup_distance_m") public var pickupDistanceMetres: Int?
    public var quote: FareEstimate?

    public init(count: Int, cars: [NearbyCar], pickupETASeconds: Int? = nil, pickupDistanceMetres: Int? = nil, quote: FareEstimate? = nil) {
        self.count = count
        self.cars = cars
        self.pickupETASeconds = pickupETASeconds
        self.pickupDistanceMetres = pickupDistanceMetres
        self.quote = quote
    }
}
