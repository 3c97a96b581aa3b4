import Bus
import Foundation
import Logging
import RideModels
import ServiceKit
import ServiceLifecycle

/// Offers expire and widen: once a second, every `NEW` order whose offer is older than the
/// timeout — or that has nobody to offer it to (all declined, or nobody was near) for 2 s — gets a
/// new round (see `OrdersOps.redispatch`).
/// After the last round it is offered again at the widest radius every timeout, to drivers not yet
/// asked; the rider may cancel at any time. An order nobody accepted within the search timeout of
/// its booking ends `CANCELLED`, reason `no_driver_found` (counted in `expired`). With tracing on,
/// each order a round acts on is a `dispatch.round` span (a trace of its own: the ops it calls,
/// the events it publishes); orders left waiting make none.
///
/// Up to `concurrentRounds` orders get their round at once: a round waits on tracking and the
/// database, so one order after another held a second's sweep to a few orders when those are a
/// network hop away (20 ms between hosts: a backlog of a hundred orders took a minute).
struct DispatchRounds: Service {
    let ops: OrdersOps
    let logger: Logger
    /// Counts an order ended for want of a driver (the metric).
    let expired: @Sendable () -> Void
    var concurrentRounds = 16

    func run() async throws {
        while !Task.isShuttingDownGracefully, !Task.isCancelled {
            try? await cancelWhenGracefulShutdown { try await Task.sleep(for: .seconds(1)) }
            let now = Date()
            let orders: [Order]
            do {
                orders = try await ops.store.newOrders(limit: 1000)
            } catch {
                logger.warning("dispatch round failed; the next second retries", metadata: ["error": "\(error)"])
                continue
            }
            await forEach(orders.filter { isDue($0, now: now) }, atMost: concurrentRounds) { order in await round(order, now: now) }
        }
    }

    /// Whether `order` is past its search timeout, or its offer past its own.
    func isDue(_ order: Order, now: Date) -> Bool {
        if searchTimedOut(order, now: now) { return true }
        let age = now.timeIntervalSince(order.offeredAt ?? order.createdAt)
        return age >= ops.dispatch.offerTimeout || (order.offeredTo.isEmpty && age >= 2)
    }

    /// Whether `order` has searched for a driver as long as it may.
    func searchTimedOut(_ order: Order, now: Date) -> Bool {
        now.timeIntervalSince(order.searchingSince ?? order.createdAt) >= ops.dispatch.searchTimeout
    }

    /// Ends `order` for want of a driver, or offers it again wider; a failure waits for the next second.
    func round(_ order: Order, now: Date) async {
        do {
            try await Trace.span("dispatch.round", kind: .internal) { span in
                span?.set("ride.order_id", order.id)
                guard searchTimedOut(order, now: now) else {
                    try await ops.redispatch(order, now: now)
                    return
                }
                if try await ops.expire(order, now: now) {
                    expired()
                    span?.set("ride.order_status", "CANCELLED")
                    logger.info("no driver found", metadata: ["order_id": "\(order.id)", "rounds": "\(order.dispatchRound ?? 1)"])
                }
            }
        } catch {
            logger.warning("dispatch round failed; the next second retries", metadata: ["order_id": "\(order.id)", "error": "\(error)"])
        }
    }
}
