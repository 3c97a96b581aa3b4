import Foundation
import Geo
import Wire

/// `order.status.<STATUS>` data.
@WireModel
public struct OrderStatusChanged: Codable, Sendable, Equatable {
    public var order: Order
    public var previousStatus: OrderStatus?

    public init(order: Order, previousStatus: OrderStatus?) {
        self.order = order
        self.previousStatus = previousStatus
    }
}

extension OrderStatusChanged {
    /// The order's id, read from the event's data without decoding the rest: a subscriber that
    /// routes by order decodes only what it passes on.
    public static func orderID(in data: JSONValue) -> String? {
        data[CodingKeys.order.stringValue]?[Order.CodingKeys.id.stringValue]?.stringValue
    }
}

/// `order.driver_cancelled` data: the order's driver cancelled before the ride and the order went
/// back to dispatch (its `redispatches`-th time). Counted once per order and time on the driver's
/// record (`User.cancellations`).
@WireModel
public struct DriverCancelled: Codable, Sendable, Equatable {
    public var orderID: String
    public var driverID: String
    /// Their phone, which stops tracking (notifications' `stop_tracking`).
    public var deviceID: String?
    public var redispatch: Int
    public var cancelledAt: Date

    public init(orderID: String, driverID: String, deviceID: String? = nil, redispatch: Int, cancelledAt: Date) {
        self.orderID = orderID
        self.driverID = driverID
        self.deviceID = deviceID
        self.redispatch = redispatch
        self.cancelledAt = cancelledAt
    }
}

// MARK: A new drop-off (kept in this file: a new file in RideModels made Swift 6.3's clean build lose
// the macro-made JSONWritable conformances of Car and TripSummary; see docs/contributing.md)

/// `order.destination_changed`: the order with its new drop-off, the one before, and the fare
/// quoted for the ride as it now goes.
@WireModel
public struct DestinationChanged: Codable, Sendable, Equatable {
    public var order: Order
    public var previousDropoff: Place
    public var fareQuote: FareEstimate

    public init(order: Order, previousDropoff: Place, fareQuote: FareEstimate) {
        self.order = order
        self.previousDropoff = previousDropoff
        self.fareQuote = fareQuote
    }
}

extension DestinationChanged {
    /// The order's id, read without decoding the rest (as `OrderStatusChanged.orderID(in:)`).
    public static func orderID(in data: JSONValue) -> String? {
        data[CodingKeys.order.stringValue]?[Order.CodingKeys.id.stringValue]?.stringValue
    }
}
