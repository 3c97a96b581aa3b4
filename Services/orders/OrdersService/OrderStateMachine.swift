import RideModels

/// Who asks for a change of an order.
public enum OrderActor: Sendable, Equatable {
    case rider(id: String)
    case driver(id: String)
    /// The orders service's own reactor, reacting to trips and arrivals.
    case reactor
}

/// What can happen to an order after it is created.
public enum OrderAction: String, Sendable, CaseIterable {
    // Asked for by people (ops).
    case accept, decline
    case startRide = "start_ride"
    case endRide = "end_ride"
    case cancel
    /// The driver ends a ride whose rider never came, after the wait at the pickup.
    case noShow = "no_show"
    // Done by the reactor (the Cloud Functions of the sample).
    case pickupTripCreated = "pickup_trip_created"
    /// Also the driver's, where the geofence has not fired (`orders.arrive`).
    case arrivedAtPickup = "arrived_at_pickup"
    case dropoffTripCreated = "dropoff_trip_created"
    case arrivedAtDropoff = "arrived_at_dropoff"
}

/// The facts about an order that decide who may do what.
public struct OrderFacts: Sendable, Equatable {
    public var status: OrderStatus
    public var riderID: String
    public var driverID: String?
    /// Drivers the order is currently offered to (dispatch).
    public var offeredTo: Set<String>
    /// Drivers it was ever offered to: one who is too late to accept is told the status (409).
    public var formerlyOffered: Set<String>
    /// Drivers who declined it: they may not accept it afterwards.
    public var declined: Set<String>

    public init(
        status: OrderStatus, riderID: String, driverID: String? = nil, offeredTo: Set<String> = [], formerlyOffered: Set<String> = [],
        declined: Set<String> = []
    ) {
        self.status = status
        self.riderID = riderID
        self.driverID = driverID
        self.offeredTo = offeredTo
        self.formerlyOffered = formerlyOffered
        self.declined = declined
    }
}

/// Why a change was refused: `forbidden` (403, this actor may never do it to this order) or
/// `illegal` (409, not from the current status, which the reply names).
public enum OrderRefusal: Error, Sendable, Equatable {
    case forbidden(String)
    case illegal(action: OrderAction, current: OrderStatus)

    public var message: String {
        switch self {
        case .forbidden(let reason): return reason
        case .illegal(let action, let current):
            return "cannot \(action.rawValue.replacingOccurrences(of: "_", with: " ")) an order that is \(current.rawValue)"
        }
    }
}

/// The order lifecycle of docs/design.md as a pure function: given the facts, an actor and an action,
/// the next status, or why not. Authorization is checked before legality, so an outsider learns
/// nothing about an order's status.
public enum OrderStateMachine {
    /// The status an action leads to, and the statuses it is legal from.
    public static func rule(for action: OrderAction) -> (from: Set<OrderStatus>, to: OrderStatus?) {
        switch action {
        case .accept: return ([.new], .accepted)
        case .decline: return ([.new], nil)  // stays NEW; the offer moves on
        case .pickupTripCreated: return ([.accepted], .pickingUp)
        case .arrivedAtPickup: return ([.pickingUp], .reachedPickup)
        case .startRide: return ([.reachedPickup], .startedRide)
        case .dropoffTripCreated: return ([.startedRide], .droppingOff)
        case .arrivedAtDropoff: return ([.droppingOff], .reachedDropoff)
        case .endRide: return ([.reachedDropoff], .completed)
        case .cancel: return (Set(OrderStatus.allCases.filter(\.isOpen)), .cancelled)
        case .noShow: return ([.reachedPickup], .cancelled)
        }
    }

    /// May `actor` see this order? A rider their own; a driver those offered to them or theirs.
    public static func canView(_ facts: OrderFacts, by actor: OrderActor) -> Bool {
        switch actor {
        case .reactor: return true
        case .rider(let id): return id == facts.riderID
        case .driver(let id): return id == facts.driverID || facts.offeredTo.contains(id)
        }
    }

    /// The status after `action`, or the refusal.
    public static func apply(_ action: OrderAction, to facts: OrderFacts, by actor: OrderActor) -> Result<OrderStatus, OrderRefusal> {
        if let refusal = authorization(action, facts, actor) { return .failure(refusal) }
        let rule = rule(for: action)
        guard rule.from.contains(facts.status) else { return .failure(.illegal(action: action, current: facts.status)) }
        return .success(rule.to ?? facts.status)
    }

    /// Whether `actor` already did `action` to this order: its driver accepting again, or starting
    /// or ending a ride they already started or ended. Requests are retried when a reply is late
    /// (Lazy Pirate), so the first attempt may have been applied: the retry gets the order as it
    /// is (200, nothing written), not a 409 telling the driver their own change is illegal.
    public static func isRepeat(_ action: OrderAction, of facts: OrderFacts, by actor: OrderActor) -> Bool {
        guard case .driver(let id) = actor, id == facts.driverID else { return false }
        switch action {
        case .accept: return facts.status != .new && facts.status != .cancelled
        case .startRide: return [.startedRide, .droppingOff, .reachedDropoff, .completed].contains(facts.status)
        case .endRide: return facts.status == .completed
        case .arrivedAtPickup: return facts.status == .reachedPickup
        case .arrivedAtDropoff: return facts.status == .reachedDropoff
        default: return false
        }
    }

    private static func authorization(_ action: OrderAction, _ facts: OrderFacts, _ actor: OrderActor) -> OrderRefusal? {
        switch (action, actor) {
        case (.pickupTripCreated, .reactor), (.arrivedAtPickup, .reactor), (.dropoffTripCreated, .reactor), (.arrivedAtDropoff, .reactor),
            (.cancel, .reactor):
            return nil
        case (.arrivedAtPickup, .driver(let id)), (.arrivedAtDropoff, .driver(let id)):
            return id == facts.driverID ? nil : .forbidden("only the order's driver may report arriving")
        case (.noShow, .driver(let id)):
            // As for start and end: an offered driver is told the status (409), a stranger is not (403).
            return id == facts.driverID || facts.offeredTo.contains(id)
                ? nil : .forbidden("only the order's driver may end it as a no-show")
        case (.noShow, _):
            return .forbidden("only the order's driver may end it as a no-show")
        case (.pickupTripCreated, _), (.arrivedAtPickup, _), (.dropoffTripCreated, _), (.arrivedAtDropoff, _):
            return .forbidden("only the orders service moves an order to its next leg")
        case (.cancel, .rider(let id)):
            return id == facts.riderID ? nil : .forbidden("a rider may cancel only their own orders")
        case (.cancel, .driver(let id)):
            return id == facts.driverID ? nil : .forbidden("a driver may cancel only the order they accepted")
        case (.accept, .driver(let id)) where facts.declined.contains(id) && facts.status == .new:
            return .forbidden("driver \(id) declined this order; it went to another driver")
        case (.accept, .driver(let id)), (.decline, .driver(let id)):
            // A driver who holds the order, or was offered it and is too late, gets the status conflict, not a 403.
            return facts.offeredTo.contains(id) || facts.formerlyOffered.contains(id) || facts.driverID == id
                ? nil : .forbidden("this order was not offered to driver \(id)")
        case (.startRide, .driver(let id)), (.endRide, .driver(let id)):
            // An offered driver is told the status (409), a stranger is not (403).
            return id == facts.driverID || facts.offeredTo.contains(id)
                ? nil : .forbidden("only the order's driver may \(action == .startRide ? "start" : "end") the ride")
        case (.accept, _), (.decline, _), (.startRide, _), (.endRide, _):
            return .forbidden("only a driver may \(action.rawValue.replacingOccurrences(of: "_", with: " ")) an order")
        }
    }
}
