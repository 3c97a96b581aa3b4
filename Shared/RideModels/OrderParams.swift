import Foundation
import Geo
import Wire

/// `orders.create`. Each place is given as a `Place` or as the id of one of the rider's saved
/// places (`users.save_place`).
@WireModel
public struct CreateOrderParams: Codable, Sendable, Equatable {
    public var caller: Caller
    public var pickup: Place?
    public var dropoff: Place?
    public var pickupPlaceID: String?
    public var dropoffPlaceID: String?

    public init(caller: Caller, pickup: Place? = nil, dropoff: Place? = nil, pickupPlaceID: String? = nil, dropoffPlaceID: String? = nil) {
        self.caller = caller
        self.pickup = pickup
        self.dropoff = dropoff
        self.pickupPlaceID = pickupPlaceID
        self.dropoffPlaceID = dropoffPlaceID
    }
}

/// `orders.get`, `accept`, `decline`, `start_ride`, `end_ride`, `cancel`.
@WireModel
public struct OrderParams: Codable, Sendable, Equatable {
    public var caller: Caller
    public var id: String
    /// `cancel` only: why, shown to the other party.
    @WireField(maxLength: 500)
    public var reason: String?

    public init(caller: Caller, id: String, reason: String? = nil) {
        self.caller = caller
        self.id = id
        self.reason = reason
    }
}

/// `orders.list`: a rider's orders, a driver's orders (offered or theirs), or — `status` with
/// `near` — orders of that status around a point (drivers looking for `NEW` orders).
@WireModel
public struct ListOrdersParams: Codable, Sendable, Equatable {
    @WireModel
    public struct Near: Codable, Sendable, Equatable {
        @WireField(minimum: -90, maximum: 90)
        public var latitude: Double
        @WireField(minimum: -180, maximum: 180)
        public var longitude: Double
        /// Metres; 5000 when absent.
        @WireField(maximum: 50_000, exclusiveMinimum: 0)
        public var radius: Double?

        public static let defaultRadius = 5000.0

        public init(latitude: Double, longitude: Double, radius: Double? = nil) {
            self.latitude = latitude
            self.longitude = longitude
            self.radius = radius
        }
    }

    public var caller: Caller
    public var status: OrderStatus?
    public var near: Near?
    @WireField(minimum: 1, maximum: 500)
    public var limit: Int?

    public init(caller: Caller, status: OrderStatus? = nil, near: Near? = nil, limit: Int? = nil) {
        self.caller = caller
        self.status = status
        self.near = near
        self.limit = limit
    }
}

@WireModel
public struct OrderList: Codable, Sendable, Equatable {
    public var orders: [Order]
    public init(orders: [Order]) { self.orders = orders }
}

/// `orders.stats`.
@WireModel
public struct StatsParams: Codable, Sendable, Equatable {
    /// How many open orders to list (newest first); 200 when absent.
    public var openLimit: Int?

    public init(openLimit: Int? = nil) { self.openLimit = openLimit }
}

/// `orders.stats`' reply: orders per status (all time), and the newest open orders.
@WireModel
public struct OrderStats: Codable, Sendable, Equatable {
    @WireModel
    public struct OpenOrder: Codable, Sendable, Equatable {
        public var id: String
        public var status: OrderStatus
        public var pickup: Place
        public var dropoff: Place
        public var driverName: String?
        /// The driver's profile photo (the gateway's path of it).
        public var driverPhotoURL: String?
        public var updatedAt: Date
        /// The trip being driven now (to the pickup, then to the drop-off).
        public var tripID: String?

        public init(_ order: Order) {
            id = order.id
            status = order.status
            pickup = order.pickup
            dropoff = order.dropoff
            driverName = order.driver?.name
            driverPhotoURL = order.driver?.photoURL
            updatedAt = order.updatedAt
            tripID = order.tripID
        }
    }

    /// The stores' filter for orders that ended for want of a driver: the stored document as
    /// `JSONCoding` writes it (sorted keys, no spaces).
    public static let noDriverFoundPattern = #"%"cancel_reason":""# + Order.noDriverFound + #""%"#

    public var byStatus: [String: Int]
    public var open: [OpenOrder]
    /// Of the cancelled orders, those no driver accepted in time (reason `no_driver_found`).
    public var noDriverFound: Int?
    /// Completed rides the card provider could not charge (after the bounded retries); nil with the ledger.
    public var paymentsFailed: Int?

    public init(byStatus: [String: Int], open: [OpenOrder], noDriverFound: Int? = nil, paymentsFailed: Int? = nil) {
        self.byStatus = byStatus
        self.open = open
        self.noDriverFound = noDriverFound
        self.paymentsFailed = paymentsFailed
    }
}

/// `orders.change_destination`: the rider's new drop-off, given as a `Place` or as one of their
/// saved places (`users.save_place`).
@WireModel
public struct ChangeDestinationParams: Codable, Sendable, Equatable {
    public var caller: Caller
    public var id: String
    public var dropoff: Place?
    public var dropoffPlaceID: String?

    public init(caller: Caller, id: String, dropoff: Place? = nil, dropoffPlaceID: String? = nil) {
        self.caller = caller
        self.id = id
        self.dropoff = dropoff
        self.dropoffPlaceID = dropoffPlaceID
    }
}

/// `trips.change_destination`: an active trip's new destination (the radius stays when absent).
@WireModel
public struct ChangeTripDestinationParams: Codable, Sendable, Equatable {
    public var tripID: String
    public var destination: CreateTripParams.Destination

    public init(tripID: String, destination: CreateTripParams.Destination) {
        self.tripID = tripID
        self.destination = destination
    }
}
