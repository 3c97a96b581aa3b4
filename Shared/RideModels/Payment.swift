import Foundation
import Wire

/// The record of what a completed ride was charged, through the configured payment provider —
/// one per order (the order id is the provider's idempotency key).
@WireModel
public struct Payment: Codable, Sendable, Equatable {
    public var id: String
    public var orderID: String
    public var riderID: String
    public var driverID: String
    /// The provider's name (`ledger` by default) and its reference for the charge.
    public var provider: String
    public var providerReference: String
    public var currency: String
    public var amountCents: Int
    /// What the driver earns (the amount less the platform's commission).
    public var driverEarningsCents: Int
    public var commissionCents: Int
    public var capturedAt: Date
    /// What was charged: absent for a ride's fare, `cancellation_fee` for a cancellation's fee.
    public var kind: String?
    /// When an operator gave it back, and the provider's reference for that; the driver's
    /// earnings no longer count it.
    public var refundedAt: Date?
    public var refundReference: String?

    public init(
        id: String, orderID: String, riderID: String, driverID: String, provider: String, providerReference: String, currency: String,
        amountCents: Int, driverEarningsCents: Int, commissionCents: Int, capturedAt: Date, kind: String? = nil
    ) {
        self.kind = kind
        self.id = id
        self.orderID = orderID
        self.riderID = riderID
        self.driverID = driverID
        self.provider = provider
        self.providerReference = providerReference
        self.currency = currency
        self.amountCents = amountCents
        self.driverEarningsCents = driverEarningsCents
        self.commissionCents = commissionCents
        self.capturedAt = capturedAt
    }

    /// `kind` of a cancellation's fee.
    public static let cancellationFee = "cancellation_fee"
}

/// `order.refunded` data: the payment as it is now, with its refund.
@WireModel
public struct OrderRefunded: Codable, Sendable, Equatable {
    public var payment: Payment
    public init(payment: Payment) { self.payment = payment }
}

/// `orders.refund`: an operator gives a paid order's charge back, whole.
@WireModel
public struct RefundParams: Codable, Sendable, Equatable {
    public var id: String
    public init(id: String) { self.id = id }
}

/// `order.paid` data.
@WireModel
public struct OrderPaid: Codable, Sendable, Equatable {
    public var payment: Payment
    public init(payment: Payment) { self.payment = payment }
}

/// `order.payment_failed` data: an order (a ride, a cancellation's fee) could not be charged; its rider is asked to fix
/// their card and charge it again (`retries_left` more times).
@WireModel
public struct PaymentFailed: Codable, Sendable, Equatable {
    public var orderID: String
    public var riderID: String
    public var currency: String
    public var amountCents: Int
    public var reason: String
    /// Which charge of the ride failed: 0 the first, n the rider's n-th charge again.
    public var attempt: Int
    public var retriesLeft: Int

    public init(orderID: String, riderID: String, currency: String, amountCents: Int, reason: String, attempt: Int, retriesLeft: Int) {
        (self.orderID, self.riderID, self.currency, self.amountCents) = (orderID, riderID, currency, amountCents)
        (self.reason, self.attempt, self.retriesLeft) = (reason, attempt, retriesLeft)
    }
}

/// `orders.estimate`: what a ride would cost, before booking — asked with the booking itself
/// (places or saved places' ids).
public typealias EstimateParams = CreateOrderParams

/// `orders.estimate`' reply: the route's distance and duration (along roads when the platform has
/// road data), the surge now, the fare, and the route to draw.
@WireModel
public struct FareEstimate: Codable, Sendable, Equatable {
    public var currency: String
    public var totalCents: Int
    @WireKey("distance_m") public var distanceMetres: Int
    @WireKey("duration_s") public var durationSeconds: Int
    public var surge: Double
    public var pickup: Place
    public var dropoff: Place
    /// `road` or `straight_line` (no road data: the straight line × 1.3).
    public var estimateKind: String?
    /// The way from the pickup to the dropoff (GeoJSON `LineString`); null for a straight-line estimate.
    public var route: TripSummary.LineString?

    public init(
        currency: String, totalCents: Int, distanceMetres: Int, durationSeconds: Int, surge: Double, pickup: Place, dropoff: Place,
        estimateKind: String? = nil, route: TripSummary.LineString? = nil
    ) {
        self.estimateKind = estimateKind
        self.route = route
        self.currency = currency
        self.totalCents = totalCents
        self.distanceMetres = distanceMetres
        self.durationSeconds = durationSeconds
        self.surge = surge
        self.pickup = pickup
        self.dropoff = dropoff
    }
}

/// `orders.history`: the caller's finished rides, newest first, `limit` at a time; `before` is
/// the previous page's `next_before`.
@WireModel
public struct HistoryParams: Codable, Sendable, Equatable {
    public var caller: Caller
    @WireField(pattern: TextPatterns.historyCursor, meaning: TextPatterns.historyCursorMeaning)
    public var before: String?
    @WireField(minimum: 1, maximum: 100)
    public var limit: Int?

    public init(caller: Caller, before: String? = nil, limit: Int? = nil) {
        self.caller = caller
        self.before = before
        self.limit = limit
    }
}

/// One past ride: the order (route summary, distance, duration, fare, both ratings) and its payment.
@WireModel
public struct HistoryRide: Codable, Sendable, Equatable {
    public var order: Order
    public var payment: Payment?

    public init(order: Order, payment: Payment?) {
        self.order = order
        self.payment = payment
    }
}

@WireModel
public struct RideHistory: Codable, Sendable, Equatable {
    public var rides: [HistoryRide]
    /// Pass as `before` for the next page; absent on the last page.
    public var nextBefore: String?

    public init(rides: [HistoryRide], nextBefore: String?) {
        self.rides = rides
        self.nextBefore = nextBefore
    }
}

/// `orders.earnings`: a driver's earnings per day (UTC) over the last `days` days (7 when absent).
@WireModel
public struct EarningsParams: Codable, Sendable, Equatable {
    public var caller: Caller
    /// Days back from today, today included (default 7).
    @WireField(minimum: 1, maximum: 366)
    public var days: Int?

    public init(caller: Caller, days: Int? = nil) {
        self.caller = caller
        self.days = days
    }
}

@WireModel
public struct DriverEarnings: Codable, Sendable, Equatable {
    @WireModel
    public struct Day: Codable, Sendable, Equatable {
        /// `YYYY-MM-DD`, UTC.
        public var day: String
        public var rides: Int
        public var faresCents: Int
        public var earningsCents: Int

        public init(day: String, rides: Int, faresCents: Int, earningsCents: Int) {
            self.day = day
            self.rides = rides
            self.faresCents = faresCents
            self.earningsCents = earningsCents
        }
    }

    public var driverID: String
    public var currency: String
    /// Days with at least one ride, newest first.
    public var days: [Day]
    public var totalCents: Int

    public init(driverID: String, currency: String, days: [Day], totalCents: Int) {
        self.driverID = driverID
        self.currency = currency
        self.days = days
        self.totalCents = totalCents
    }
}

/// `order.offered` data: drivers newly offered a `NEW` order (after a decline or when an offer
/// widens), so they hear of it as the first round's drivers did from `order.status.NEW`.
@WireModel
public struct OrderOffered: Codable, Sendable, Equatable {
    public var orderID: String
    public var drivers: [String]
    public var pickup: Place
    public var round: Int

    public init(orderID: String, drivers: [String], pickup: Place, round: Int) {
        self.orderID = orderID
        self.drivers = drivers
        self.pickup = pickup
        self.round = round
    }
}

/// Why an offer was withdrawn from a driver.
@WireModel
public enum OfferWithdrawalReason: String, Codable, Sendable {
    /// The driver accepted another order.
    case acceptedOther = "accepted_other"
    /// The driver went off duty, or their phone stopped reporting.
    case unavailable
}

/// `order.offer_withdrawn` data: a `NEW` order is no longer offered to a driver, who accepted
/// another ride or went offline; their app drops the offer.
@WireModel
public struct OfferWithdrawn: Codable, Sendable, Equatable {
    public var orderID: String
    public var driverID: String
    public var reason: OfferWithdrawalReason
    /// The order's version after the withdrawal: each withdrawal is news once.
    public var version: Int

    public init(orderID: String, driverID: String, reason: OfferWithdrawalReason, version: Int) {
        self.orderID = orderID
        self.driverID = driverID
        self.reason = reason
        self.version = version
    }
}
