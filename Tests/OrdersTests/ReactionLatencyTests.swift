import Foundation
import RideModels
import ServiceKit
import Testing

@testable import OrdersService

/// `ride_orders_reaction_latency_seconds`: one series per transition a reaction made, the time from
/// its event to now.
@Suite struct ReactionLatencyTests {
    @Test func aTransitionIsItsPairOfStatusesAndNoChangeIsNone() {
        #expect(OrderTransition(from: .accepted, to: .pickingUp)?.label == "ACCEPTED->PICKING_UP")
        #expect(OrderTransition(from: .droppingOff, to: .reachedDropoff)?.label == "DROPPING_OFF->REACHED_DROPOFF")
        #expect(OrderTransition(from: .accepted, to: .accepted) == nil, "the reaction changed nothing")
    }

    @Test func theLatencyIsFromTheEventsTimeToTheCommit() {
        let metrics = ServiceMetrics()
        let latency = ReactionLatency(metrics: metrics)
        let event = Date(timeIntervalSince1970: 1_000)
        latency.record(OrderTransition(from: .accepted, to: .pickingUp)!, triggeredAt: event, now: event.addingTimeInterval(0.040))
        latency.record(OrderTransition(from: .accepted, to: .pickingUp)!, triggeredAt: event, now: event.addingTimeInterval(3))
        latency.record(OrderTransition(from: .pickingUp, to: .reachedPickup)!, triggeredAt: event, now: event.addingTimeInterval(-5))
        let text = String(decoding: metrics.render(), as: UTF8.self)
        let lines = Set(text.split(separator: "\n").map(String.init))
        let name = RideMetric.reactionLatency.name
        #expect(lines.contains(#"\#(name)_count{transition="ACCEPTED->PICKING_UP"} 2"#), "\(text)")
        #expect(lines.contains(#"\#(name)_bucket{transition="ACCEPTED->PICKING_UP",le="0.05"} 1"#))
        #expect(lines.contains(#"\#(name)_bucket{transition="ACCEPTED->PICKING_UP",le="5.0"} 2"#))
        #expect(
            lines.contains(#"\#(name)_sum{transition="PICKING_UP->REACHED_PICKUP"} 0.0"#),
            "a clock behind the event's counts as 0, not negative")
    }
}

extension ReactionLatencyTests {
    @Test func theReactorsTransitionsAreExportedBeforeTheFirstReaction() {
        let metrics = ServiceMetrics()
        _ = ReactionLatency(metrics: metrics)
        let text = String(decoding: metrics.render(), as: UTF8.self)
        for transition in [
            "ACCEPTED->PICKING_UP", "PICKING_UP->REACHED_PICKUP", "STARTED_RIDE->DROPPING_OFF", "DROPPING_OFF->REACHED_DROPOFF",
        ] {
            #expect(text.contains(#"\#(RideMetric.reactionLatency.name)_count{transition="\#(transition)"} 0"#), "\(transition): \(text)")
        }
    }
}
