import Bus
import Foundation
import Logging
import ServiceLifecycle

/// Offers expire and widen: once a second, every `NEW` order whose offer is older than the
/// timeout — or that has nobody to offer it to (all declined, or nobody was near) for 2 s — gets a
/// new round (see `OrdersOps.redispatch`).
/// After the last round it is offered again at the widest radius every timeout, to drivers not yet
/// asked; the rider may cancel at any time. An order nobody accepted within the search timeout of
/// its booking ends `CANCELLED`, reason `no_driver_found` (counted in `expired`). With tracing on,
/// each order a round acts on is a `dispatch.round` span (a trace of its own: the ops it calls,
/// the events it publishes); orders left waiting make none.
struct DispatchRounds: Service {
    let ops: OrdersOps
    let logger: Logger
    /// Counts an order ended for want of a driver (the metric).
    let expired: @Sendable () -> Void

    func run() async throws {
        while !Task.isShuttingDownGracefully, !Task.isCancelled {
            try? await cancelWhenGracefulShutdown { try await Task.sleep(for: .seconds(1)) }
            let now = Date()
            do {
                for order in try await ops.store.newOrders(limit: 1000) {
                    if now.timeIntervalSince(order.searchingSince ?? order.createdAt) >= ops.dispatch.searchTimeout {
                        try await Trace.span("dispatch.round", kind: .internal) { span in
                            span?.set("ride.order_id", order.id)
                            if try await ops.expire(order, now: now) {
                                expired()
                                span?.set("ride.order_status", "CANCELLED")
                                logger.info("no driver found", metadata: ["order_id": "\(order.id)", "rounds": "\(order.dispatchRound ?? 1)"])
                            }
                        }
                        continue
                    }
                    let age = now.timeIntervalSince(order.offeredAt ?? order.createdAt)
                    if age >= ops.dispatch.offerTimeout || (order.offeredTo.isEmpty && age >= 2) {
                        try await Trace.span("dispatch.round", kind: .internal) { span in
                            span?.set("ride.order_id", order.id)
                            try await ops.redispatch(order, now: now)
                        }
                    }
                }
            } catch {
                logger.warning("dispatch round failed; the next second retries", metadata: ["error": "\(error)"])
            }
        }
    }
}
