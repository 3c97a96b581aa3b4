import Foundation
import Wire

/// `orders.share`: the ride's share id, made on the rider's first ask and the same after, until
/// the rider revokes it (`orders.revoke_share`).
@WireModel
public struct RideShare: Codable, Sendable, Equatable {
    public var orderID: String
    public var shareID: String

    public init(orderID: String, shareID: String) {
        self.orderID = orderID
        self.shareID = shareID
    }
}

/// Which trip of a ride is being driven: to the pickup, then to the drop-off.
@WireModel
public enum RideLeg: String, Codable, Sendable, CaseIterable {
    case pickup, dropoff

    /// The leg an order at `status` is on; nil before a driver has it and after the ride.
    public init?(_ status: OrderStatus) {
        switch status {
        case .accepted, .pickingUp, .reachedPickup: self = .pickup
        case .startedRide, .droppingOff, .reachedDropoff: self = .dropoff
        case .new, .completed, .cancelled: return nil
        }
    }
}

/// A finished ride as its share page shows it: the route driven, how far and how long. No device,
/// no markers (`TripSummary` has both).
@WireModel
public struct SharedSummary: Codable, Sendable, Equatable {
    public var locations: TripSummary.LineString
    /// Metres.
    public var distance: Int
    /// Seconds.
    public var duration: Int
    public var completedAt: Date

    public init(_ summary: TripSummary) {
        locations = summary.locations
        distance = summary.distance
        duration = summary.duration
        completedAt = summary.completedAt
    }
}

/// `orders.get_by_share`: what a ride's share link may show a friend of the rider — where the
/// ride stands, the places, the driver's first name and car (no phone, no ids of people or
/// devices), and the summary and fare at the end — until `expiresAt`.
@WireModel
public struct SharedRide: Codable, Sendable, Equatable {
    public var status: OrderStatus
    public var pickup: Place
    public var dropoff: Place
    public var driver: SharedDriver?
    /// The trip being driven now, for the gateway to read (it never shows the id); absent between legs.
    public var tripID: String?
    public var leg: RideLeg?
    public var summary: SharedSummary?
    public var fare: Fare?
    public var updatedAt: Date
    /// When the link stops working: `ShareRules.lifetimeAfterRide` after the ride ended; absent while it goes on.
    public var expiresAt: Date?

    public init(_ order: Order, lifetimeAfterRide: TimeInterval) {
        status = order.status
        pickup = order.pickup
        dropoff = order.dropoff
        driver = order.driver.map { SharedDriver(name: $0.name, car: $0.car, photoURL: $0.photoURL) }
        tripID = order.status.hasDriver ? order.tripID : nil
        leg = tripID == nil ? nil : RideLeg(order.status)
        summary = order.summary.map(SharedSummary.init)
        fare = order.fare
        updatedAt = order.updatedAt
        expiresAt = ShareRules.endOfRide(order).map { $0 + lifetimeAfterRide }
    }
}

/// When a ride's share link works.
public enum ShareRules {
    /// How long a link works after its ride ended, unless orders is told otherwise (`--share-lifetime-s`).
    public static let lifetimeAfterRide: TimeInterval = 3600

    /// When the ride ended (completed, or cancelled); nil while it goes on.
    public static func endOfRide(_ order: Order) -> Date? {
        switch order.status {
        case .completed: order.summary?.completedAt ?? order.updatedAt
        case .cancelled: order.cancelledAt ?? order.updatedAt
        default: nil
        }
    }
}
