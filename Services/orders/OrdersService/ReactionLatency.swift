import Foundation
import RideModels
import ServiceKit

/// A status change a reaction made, `FROM->TO`: the `transition` label of
/// `ride_orders_reaction_latency_seconds` (at most one per pair of statuses: bounded).
struct OrderTransition: Hashable, Sendable {
    let from: OrderStatus
    let to: OrderStatus

    /// Nil when the status stayed (the reaction changed nothing).
    init?(from: OrderStatus, to: OrderStatus) {
        guard from != to else { return nil }
        self.from = from
        self.to = to
    }

    var label: String { "\(from.rawValue)->\(to.rawValue)" }
}

/// `ride_orders_reaction_latency_seconds`: from the event that triggered a reaction (its CloudEvent
/// `time`) to the status change the reaction committed, per transition.
struct ReactionLatency: Sendable {
    private let timers: TimerFamily

    /// The transitions the reactor makes (`OrderReactions.startLeg`, `arrived`).
    static let reactive = [
        OrderTransition(from: .accepted, to: .pickingUp), OrderTransition(from: .pickingUp, to: .reachedPickup),
        OrderTransition(from: .startedRide, to: .droppingOff), OrderTransition(from: .droppingOff, to: .reachedDropoff),
    ].compactMap { $0 }

    /// The series of `reactive` are exported from the start, empty: a `rate()` over them sees the
    /// first reaction too (a series born with its first count looks flat).
    init(metrics: ServiceMetrics) {
        timers = TimerFamily(RideMetric.reactionLatency, in: metrics)
        for transition in Self.reactive { timers.prepare([transition.label]) }
    }

    /// Records `transition`, made at `now` in reaction to an event of `triggeredAt`.
    func record(_ transition: OrderTransition, triggeredAt: Date, now: Date = Date()) {
        timers.record(.seconds(max(0, now.timeIntervalSince(triggeredAt))), [transition.label])
    }
}
