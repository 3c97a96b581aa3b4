import Foundation
import RideModels

/// Who may chat about an order and rate it (pure; unit-tested). The two parties are the rider and
/// the order's driver; nobody else may read or write either. Authorization comes before state, so
/// an outsider learns nothing about the order.
public enum ConversationRules {
    public enum Refusal: Error, Equatable {
        /// 403: not a party of the order.
        case notAParty
        /// 409: not now (the reply says why).
        case notNow(String)
    }

    /// Whether `caller` is the order's rider or its driver.
    public static func isParty(_ caller: Caller, _ order: Order) -> Bool {
        switch caller.role {
        case .rider: return caller.id == order.rider.id
        case .driver: return order.driver?.id == caller.id
        }
    }

    /// The other party of `caller` on `order`, if the caller is a party and there is one.
    public static func otherParty(of caller: Caller, on order: Order) -> String? {
        guard isParty(caller, order) else { return nil }
        return caller.role == .rider ? order.driver?.id : order.rider.id
    }

    /// Whether `caller` may read the order's chat (during the ride and after it: read-only then).
    public static func canRead(_ caller: Caller, _ order: Order) -> Bool { isParty(caller, order) }

    /// Whether the chat takes messages now: while a driver is on the order (from `ACCEPTED` to
    /// `REACHED_DROPOFF`), and again after the ride once a lost item is reported.
    public static func isOpen(_ order: Order) -> Bool { order.status.hasDriver || (order.chatReopenedAt != nil && order.driver != nil) }

    /// The recipient of a message `caller` sends now, or why not (`isOpen`).
    public static func recipient(of caller: Caller, on order: Order) -> Result<String, Refusal> {
        guard isParty(caller, order) else { return .failure(.notAParty) }
        guard isOpen(order), let other = otherParty(of: caller, on: order) else {
            let why = order.status == .new ? "opens when a driver accepts" : "is read-only after the ride"
            return .failure(.notNow("the chat of order \(order.id) \(why) (status \(order.status.rawValue))"))
        }
        return .success(other)
    }

    /// Who `caller` rates on `order`, or why not: only after `COMPLETED`, once per side.
    public static func ratee(of caller: Caller, on order: Order) -> Result<String, Refusal> {
        guard isParty(caller, order) else { return .failure(.notAParty) }
        guard order.status == .completed, let other = otherParty(of: caller, on: order) else {
            return .failure(.notNow("order \(order.id) is \(order.status.rawValue); a ride is rated once it is COMPLETED"))
        }
        let given = caller.role == .rider ? order.ratingByRider : order.ratingByDriver
        if given != nil { return .failure(.notNow("you already rated order \(order.id)")) }
        return .success(other)
    }
}
