import Bus
import Foundation
import Logging
import RideContract
import RideModels
import Storage

/// The orders reactor: subscribes to `order.status.` and `trip.` (acting on arrivals) the way
/// Cloud Functions are triggered by Firestore changes, and runs `OrderReactions` for each event;
/// after an acceptance, the driver's other offers are withdrawn (`OfferWithdrawal.swift`).
/// Nothing depends on one event arriving: `EventReactor` catches up on a restart or a gap through
/// the sources' `events` (its own outbox; `trips.events`).
enum OrdersReactor {
    static let sources = [BusContract.Service.orders, BusContract.Service.trips]

    static func make(
        reactions: OrderReactions, ops: OrdersOps, store: any OrderStorage, platform: ServiceClient, subscriber: EventSubscriber<LifecycleEvent>,
        latency: ReactionLatency? = nil, logger: Logger
    ) -> EventReactor<LifecycleEvent> {
        EventReactor(
            name: "reactor", service: "orders", sources: sources, cursors: store, subscriber: subscriber, logger: logger,
            fetch: { source, after, limit in
                if source == BusContract.Service.orders {
                    return try await store.eventLog.page(source: source, query: EventsQuery(after: after, limit: limit))
                }
                return try await platform.call(Ops.events(of: source), EventsQuery(after: after, limit: limit))
            },
            handle: { event in
                switch event.data {
                case .order(let change):
                    if let moved = await reactions.react(to: change.order) { latency?.record(moved, triggeredAt: event.time) }
                    // The driver who accepted can take no other order: their other offers go.
                    if change.order.status == .accepted {
                        await reactions.retrying("withdrawing the driver's other offers", change.order.id) {
                            try await ops.withdrawOtherOffers(acceptedOrder: change.order.id)
                        }
                    }
                case .arrival(let arrival):
                    if let moved = await reactions.react(to: arrival) { latency?.record(moved, triggeredAt: event.time) }
                case .other: break
                }
            })
    }
}
