import Bus
import Foundation
import RideModels

/// The ops that read an order's account: the order itself, the caller's history and earnings,
/// payments, and the dashboard's counts.
extension OrdersOps {
    /// The order, to its rider or driver (or a driver it was offered to).
    func viewed(_ params: OrderParams) async throws -> Order {
        let order = try await existing(params.id)
        guard OrderStateMachine.canView(order.facts, by: OrderActor(params.caller)) else { throw forbidden("this order is not yours") }
        return order
    }

    /// A page of the caller's finished rides, newest first, each as their role may see it.
    func history(_ params: HistoryParams) async throws -> RideHistory {
        var before: HistoryCursor?
        if let text = params.before {
            guard let cursor = HistoryCursor(text) else {
                throw ServiceError.unprocessable("invalid_params", "before: must be a next_before value from a previous page")
            }
            before = cursor
        }
        var history = try await store.history(of: params.caller, before: before, limit: params.limit ?? 20)
        for index in history.rides.indices {
            history.rides[index].order = OrderPrivacy.shown(history.rides[index].order, to: params.caller)
        }
        return history
    }

    /// A driver's earnings per UTC day over the last `days`.
    func earnings(_ params: EarningsParams) async throws -> DriverEarnings {
        guard params.caller.role == .driver else { throw forbidden("earnings are a driver's") }
        let days = params.days ?? 7  // 1...366: EarningsParams states it, the router checks it
        let first = UTCDay.string(Date().addingTimeInterval(-Double(days - 1) * 86_400))
        let perDay = try await store.earnings(driverID: params.caller.id, from: first)
        return DriverEarnings(
            driverID: params.caller.id, currency: fares.currency, days: perDay, totalCents: perDay.reduce(0) { $0 + $1.earningsCents })
    }

    /// The order's payment, to its rider or driver; 409 when its charge failed, 404 before one.
    func payment(_ params: OrderParams) async throws -> Payment {
        let order = try await viewed(params)
        guard let payment = try await store.payment(orderID: order.id) else {
            if order.payment == .failed {
                throw ServiceError.conflict(
                    "payment_failed",
                    "payment: failed — \(order.paymentError ?? "not charged"); the rider must add a working card (POST /v1/me/payment-sheet) and pay again (POST /v1/orders/\(order.id)/payment)"
                )
            }
            throw ServiceError.notFound(
                "no_payment", "order \(order.id) has no payment yet (status \(order.status.rawValue)); it is charged once COMPLETED")
        }
        return payment
    }

    /// The rider pays again for an order whose charge failed.
    func retryPayment(_ params: OrderParams) async throws -> Payment {
        let order = try await existing(params.id)
        guard params.caller.role == .rider, order.rider.id == params.caller.id else {
            throw forbidden("only the order's rider pays for it")
        }
        return try await payments.retry(order)
    }

    /// Counts by status and the open orders, for the dashboard.
    func stats(_ params: StatsParams) async throws -> OrderStats {
        let limit = params.openLimit ?? 200
        guard (0...1000).contains(limit) else {
            throw ServiceError.unprocessable("invalid_params", "open_limit: must be from 0 to 1000, got \(limit)")
        }
        var stats = try await store.stats(openLimit: limit)
        if let cards = payments.provider as? any CardPaymentProvider { stats.paymentsFailed = try await cards.failedCharges() }
        return stats
    }
}
