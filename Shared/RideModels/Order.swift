import Foundation

/// An order's status, in the order of the seed's nine steps (`reference/models.md`).
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
public struct Place: Codable, Sendable, Equatable {
    public var latitude: Double
    public var longitude: Double
    public var address: String?

    public init(latitude: Double, longitude: Double, address: String? = nil) {
        self.latitude = latitude
        self.longitude = longitude
        self.address = address
    }
}
