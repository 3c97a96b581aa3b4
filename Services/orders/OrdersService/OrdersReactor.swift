import Bus
import Foundation
import Logging
import RideContract
import RideModels
import ServiceStorage
import Storage

/// The orders reactor: subscribes to `order.status.` and `trip.` (acting on arrivals) the way
/// Cloud Functions are triggered by Firestore changes, and runs `OrderReactions` for each event;
/// after an acceptance, the driver's other offers are withdrawn (`OfferWithdrawal.swift`).
/// Nothing depends on one event arriving: `EventReactor` catches up on a restart or a gap through
/// the sources' `events` (its own outbox; `trips.events`). Nothing depends on an event's payload
/// either: a reaction takes the order's id (an arrival, the trip's) and reads the rest from its
/// owner, so an event that is not the publisher's can at most make a reaction look and do nothing.
enum OrdersReactor {
    static let sources = [BusContract.Service.orders, BusContract.Service.trips]

    static func make(
        reactions: OrderReactions, ops: OrdersOps, store: any OrderStorage, platform: ServiceClient,
        subscriber: any EventFeed<LifecycleEvent>,
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
                await handle(event, reactions: reactions, latency: latency) { orderID in
                    try await ops.withdrawOtherOffers(acceptedOrder: orderID)
                }
            })
    }

    /// One event: what it is about (an order's id and new status, an arrival's trip) is all it is
    /// asked; `withdrawOtherOffers` is given an accepted order's id.
    static func handle(
        _ event: CloudEvent<LifecycleEvent>, reactions: OrderReactions, latency: ReactionLatency?,
        withdrawOtherOffers: @escaping @Sendable (_ orderID: String) async throws -> Void
    ) async {
        switch event.data {
        case .order(let change) where event.source == BusContract.Service.orders:
            let (status, orderID) = (change.order.status, change.order.id)
            if let moved = await reactions.react(to: status, orderID: orderID) { latency?.record(moved, triggeredAt: event.time) }
            // The driver who accepted can take no other order: their other offers go (the stored order's driver).
            if status == .accepted {
                await reactions.retrying("withdrawing the driver's other offers", orderID) { try await withdrawOtherOffers(orderID) }
            }
        case .arrival(let arrival) where event.source == BusContract.Service.trips:
            if let moved = await reactions.react(toArrivalOf: arrival.data.tripID) { latency?.record(moved, triggeredAt: event.time) }
        case .order, .arrival, .other: break
        }
    }
}
