import Foundation
import Logging
import ServiceLifecycle

/// Offers expire and widen: once a second, every `NEW` order whose offer is older than the
/// timeout — or that has nobody to offer it to (all declined, or nobody was near) for 2 s — gets a
/// new round (see `OrdersOps.redispatch`).
/// After the last round it is offered again at the widest radius every timeout, to drivers not yet
/// asked; the rider may cancel at any time.
struct DispatchRounds: Service {
    let ops: OrdersOps
    let logger: Logger

    func run() async throws {
        while !Task.isShuttingDownGracefully, !Task.isCancelled {
            try? await cancelWhenGracefulShutdown { try await Task.sleep(for: .seconds(1)) }
            let now = Date()
            do {
                for order in try await ops.store.newOrders(limit: 1000) {
                    let age = now.timeIntervalSince(order.offeredAt ?? order.createdAt)
                    if age >= ops.dispatch.offerTimeout || (order.offeredTo.isEmpty && age >= 2) { try await ops.redispatch(order, now: now) }
                }
            } catch {
                logger.warning("dispatch round failed; the next second retries", metadata: ["error": "\(error)"])
            }
        }
    }
}
