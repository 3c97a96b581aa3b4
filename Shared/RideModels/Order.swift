import Foundation
import Geo
import Wire

/// An order's status, in the order of the seed's nine steps (docs/services/orders.md).
@WireModel
public enum OrderStatus: String, Codable, Sendable, CaseIterable, Comparable {
    case new = "NEW"
    case accepted = "ACCEPTED"
    case pickingUp = "PICKING_UP"
    case reachedPickup = "REACHED_PICKUP"
    case startedRide = "STARTED_RIDE"
    case droppingOff = "DROPPING_OFF"
    case reachedDropoff = "REACHED_DROPOFF"
    case completed = "COMPLETED"
    case cancelled = "CANCELLED"

    /// Open orders can still change; `COMPLETED` and `CANCELLED` are final.
    public var isOpen: Bool { self != .completed && self != .cancelled }

    /// Statuses at which a driver is assigned to the order.
    public var hasDriver: Bool { isOpen && self != .new }

    public static func < (lhs: OrderStatus, rhs: OrderStatus) -> Bool {
        allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)!
    }
}

/// A place the rider picks: where to be picked up, where to be dropped off.
@WireModel
public struct Place: Codable, Sendable, Equatable {
    @WireField(minimum: -90, maximum: 90)
    public var latitude: Double
    @WireField(minimum: -180, maximum: 180)
    public var longitude: Double
    @WireField(maxLength: 300)
    public var address: String?

    public init(latitude: Double, longitude: Double, address: String? = nil) {
        self.latitude = latitude
        self.longitude = longitude
        self.address = address
    }

    /// Where it is, as a point.
    public var point: GeoPoint { GeoPoint(latitude: latitude, longitude: longitude) }
}

/// Who is asking, as the caller (the gateway, after `users.authenticate`) vouches. Every orders op
/// carries one: a rider may touch only their own orders, a driver only orders offered to or
/// accepted by them.
@WireModel
public struct Caller: Codable, Sendable, Equatable {
    public var role: UserRole
    public var id: String

    public init(role: UserRole, id: String) {
        self.role = role
        self.id = id
    }

    /// The caller `user` is.
    public init(_ user: User) { self.init(role: user.role, id: user.id) }

    public static func rider(_ id: String) -> Caller { Caller(role: .rider, id: id) }
    public static func driver(_ id: String) -> Caller { Caller(role: .driver, id: id) }
}

/// An order: the document apps watch (docs/services/orders.md), with copies of its rider and driver.
@WireModel
public struct Order: Codable, Sendable, Equatable {
    /// The `cancel_reason` of an order no driver accepted in time (orders' `--driver-search-s`).
    public static let noDriverFound = "no_driver_found"
    /// The `cancel_reason` of a ride its driver ended because the rider never came to the pickup (`orders.no_show`).
    public static let noShow = "no_show"

    public var id: String
    public var status: OrderStatus
    public var rider: User
    public var pickup: Place
    public var dropoff: Place
    public var createdAt: Date
    public var updatedAt: Date
    public var driver: User?
    public var tripID: String?
    /// Drivers the order is offered to while it is `NEW` (dispatch).
    public var offeredTo: [String]
    /// Drivers who declined it; never offered it again.
    public var declinedBy: [String]
    /// Every driver it was ever offered to.
    public var offerHistory: [String]
    /// How many times it has been offered (each round looks farther) and when the last round was.
    public var dispatchRound: Int?
    public var offeredAt: Date?
    /// Grows by one with every change: reactions update only the version they saw.
    public var version: Int
    public var cancelReason: String?
    /// Who cancelled (absent when the platform did: no driver found) and when. A cancelled order
    /// keeps its driver, so the ride stays in both parties' histories and its chat readable.
    public var cancelledBy: Caller?
    public var cancelledAt: Date?
    /// How many times a driver cancelled after accepting and the order went back to dispatch;
    /// absent for none. Each time is a new round of the ride: new trips, new notifications.
    public var redispatches: Int?
    /// Since when dispatch looks for a driver: the booking, or the last driver's cancel.
    public var searchingSince: Date?
    /// The ride's summary (from the dropoff trip), once `COMPLETED`.
    public var summary: TripSummary?
    public var fare: Fare?
    /// The fare multiplier quoted at booking (demand near the pickup); absent means 1.
    public var surge: Double?
    /// What each side said of the other after `COMPLETED` (`orders.rate`).
    public var ratingByRider: RatingGiven?
    public var ratingByDriver: RatingGiven?
    /// The ride's share id (`orders.share`): one link that follows the whole ride.
    public var shareID: String?
    /// When a lost-item report reopened the finished ride's chat (`orders.report`): rider and
    /// driver may write to each other again.
    public var chatReopenedAt: Date?
    /// Whether the ride was charged: `paid`, or `failed` (the rider is asked to fix their card and
    /// charge it again, `orders.retry_payment`); absent until the charge is decided.
    public var payment: PaymentState?
    /// Why the last charge failed, while `payment` is `failed`.
    public var paymentError: String?
    /// How many times the rider had it charged again after a failure; absent for none.
    public var paymentRetries: Int?
    /// What the rider is charged for cancelling after the driver reached the pickup (orders'
    /// `--cancellation-fee`); absent when cancelling cost nothing.
    public var cancellationFee: Fee?
    /// When the driver reached the pickup (the geofence, or the driver's word: `arrivalsReported`);
    /// a no-show may be called only a wait after it.
    public var reachedPickupAt: Date?
    /// The legs (`pickup`, `dropoff`) whose arrival the driver reported where the geofence had not
    /// fired (`orders.arrive`); absent when every arrival was detected.
    public var arrivalsReported: [String]?
    /// The fare quoted when the rider last changed the drop-off (`orders.change_destination`):
    /// from the pickup (by the driver's position, once riding) to the new drop-off, at the ride's
    /// surge; absent while the destination is the booked one. The fare charged still comes from
    /// the ride as driven.
    public var fareQuote: FareEstimate?

    public init(
        id: String, status: OrderStatus, rider: User, pickup: Place, dropoff: Place, createdAt: Date, updatedAt: Date,
        driver: User? = nil, tripID: String? = nil, offeredTo: [String] = [], declinedBy: [String] = [], offerHistory: [String] = [],
        version: Int = 1, cancelReason: String? = nil
    ) {
        self.id = id
        self.status = status
        self.rider = rider
        self.pickup = pickup
        self.dropoff = dropoff
        self.createdAt = createdAt
        self.updatedAt = updatedAt
        self.driver = driver
        self.tripID = tripID
        self.offeredTo = offeredTo
        self.declinedBy = declinedBy
        self.offerHistory = offerHistory
        self.version = version
        self.cancelReason = cancelReason
    }
}

/// An amount charged other than a ride's fare (a cancellation fee), in minor units.
@WireModel
public struct Fee: Codable, Sendable, Equatable {
    public var currency: String
    public var amountCents: Int

    public init(currency: String, amountCents: Int) {
        (self.currency, self.amountCents) = (currency, amountCents)
    }
}

/// Whether a completed ride's fare was charged (`Order.payment`).
@WireModel
public enum PaymentState: String, Codable, Sendable, CaseIterable {
    case paid
    /// The provider refused or did not answer within the bounded attempts; the ride stays completed.
    case failed
    /// Paid, then given back by an operator (`orders.refund`).
    case refunded
}

/// What a ride cost: the schedule's parts and the total, in minor units (cents).
@WireModel
public struct Fare: Codable, Sendable, Equatable {
    public var currency: String
    public var totalCents: Int
    @WireKey("distance_m") public var distanceMetres: Int
    @WireKey("duration_s") public var durationSeconds: Int
    /// The multiplier applied (quoted at booking); absent means 1.
    public var surge: Double?

    public init(currency: String, totalCents: Int, distanceMetres: Int, durationSeconds: Int, surge: Double? = nil) {
        self.currency = currency
        self.totalCents = totalCents
        self.distanceMetres = distanceMetres
        self.durationSeconds = durationSeconds
        self.surge = surge
    }
}
