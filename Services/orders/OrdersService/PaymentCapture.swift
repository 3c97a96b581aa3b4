import Bus
import Foundation
import RideContract
import RideModels
import ServiceStorage
import Storage

/// Charging an order: a completed ride's fare, or the fee of a cancellation after the driver
/// reached the pickup, as orders' store has the order (never an event's copy of it), through the
/// provider (keyed by the order id); then the payment recorded
/// with `order.paid` and the order marked `payment: paid` — once, however often it runs (the
/// reactor retries it until it succeeds; a crash between the charge and the record replays into the
/// same receipt). A charge that fails marks the order `payment: failed` with `order.payment_failed`
/// (its rider is asked to fix the card) and never holds up the ride; the rider then has it charged
/// again (`retry`), a bounded number of times. An operator can give a charge back (`refund`).
public struct PaymentCapture: Sendable {
    let store: any OrderStorage
    let provider: any PaymentProvider
    let commissionPercent: Int
    /// Woken when a charge's outcome is stored with its events.
    let relay: OutboxRelay?

    public init(store: any OrderStorage, provider: any PaymentProvider, commissionPercent: Int, relay: OutboxRelay? = nil) {
        self.store = store
        self.provider = provider
        self.commissionPercent = commissionPercent
        self.relay = relay
    }

    /// The driver's share of `amount` after the commission (the platform keeps the rounding).
    public static func driverShare(of amount: Int, commissionPercent: Int) -> Int {
        amount * (100 - commissionPercent) / 100
    }

    /// Attempts at a card provider's charge before the ride is recorded as not charged (the
    /// reactor's backoff between them: 50 ms doubling). The ledger is retried until it answers.
    public static let maxCardAttempts = 5
    /// How many times a rider may have a failed ride charged again (`orders.retry_payment`).
    public static let maxRetries = 5

    /// What `order` is charged, if anything: a completed ride's fare, or a cancellation's fee.
    static func due(_ order: Order) -> (fee: Fee, driver: User, kind: String?)? {
        guard let driver = order.driver else { return nil }
        switch order.status {
        case .completed: return order.fare.map { (Fee(currency: $0.currency, amountCents: $0.totalCents), driver, nil) }
        case .cancelled: return order.cancellationFee.map { ($0, driver, Payment.cancellationFee) }
        default: return nil
        }
    }

    /// Charges the order `orderID` for the reactor, as orders' store has it — its status, fare or
    /// fee, rider and driver; never what an event said of it. Nil when there is nothing to charge —
    /// no such order, nothing due, or charged or failed before (after a failure it is the rider who
    /// has it charged again). `attempt` counts the reactor's tries: a card provider's failure on the
    /// last one, or a refusal on any, is recorded (`payment: failed`) and not retried.
    @discardableResult
    public func capture(orderID: String, attempt: Int = 1) async throws -> Payment? {
        guard let order = try await store.order(id: orderID), Self.due(order) != nil else { return nil }
        if let existing = try await recordedPayment(order.id) { return existing }
        if attempt == 1, order.payment == .failed { return nil }
        return try await charge(order, round: 0, attempt: attempt, lastAttempt: attempt >= Self.maxCardAttempts)
    }

    /// The rider's charge again of an order whose charge failed (after fixing their card): one
    /// round of at most `maxCardAttempts` attempts, keyed apart from the earlier rounds, so
    /// concurrent asks are the same charge and a charge never happens twice.
    public func retry(_ order: Order) async throws -> Payment {
        if let existing = try await recordedPayment(order.id) { return existing }
        guard Self.due(order) != nil, order.payment == .failed else {
            throw ServiceError.conflict(
                "payment_not_failed", "order \(order.id) has no failed charge to make again (status \(order.status.rawValue))")
        }
        let round = (order.paymentRetries ?? 0) + 1
        guard round <= Self.maxRetries else {
            throw ServiceError.conflict(
                "payment_retries_exhausted",
                "order \(order.id) was charged again \(Self.maxRetries) times without success; the rider must contact support")
        }
        return try await attempts { attempt in
            try await charge(order, round: round, attempt: attempt, lastAttempt: attempt >= Self.maxCardAttempts)
        }
    }

    /// Gives a paid order's charge back, whole (an operator's decision: a cancellation fee
    /// disputed, a fare reported wrong): the provider refunds it, the payment says so and no longer
    /// counts in the driver's earnings, the order says `payment: refunded`, and `order.refunded`
    /// tells the rider. Asked again, the same refund.
    public func refund(_ order: Order) async throws -> Payment {
        guard let payment = try await store.payment(orderID: order.id) else {
            throw ServiceError.conflict("not_paid", "order \(order.id) has no payment to refund (status \(order.status.rawValue))")
        }
        if payment.refundedAt != nil {
            try await markRefunded(order.id)
            return payment
        }
        let request = RefundRequest(
            idempotencyKey: order.id, chargeReference: payment.providerReference,
            charge: ChargeRequest(
                idempotencyKey: order.id, payerID: payment.riderID, payeeID: payment.driverID, currency: payment.currency,
                amountCents: payment.amountCents, payeeShareCents: payment.driverEarningsCents))
        let receipt = try await attempts { attempt in
            do {
                return try await provider.refund(request)
            } catch let error as PaymentError {
                throw ServiceError.conflict("refund_refused", "order \(order.id): \(error)")
            } catch  where attempt >= Self.maxCardAttempts {
                throw ServiceError(
                    status: 503, code: "provider_unavailable",
                    message: "order \(order.id): not refunded after \(attempt) attempts: \(error)")
            }
        }
        guard let recorded = try await store.recordRefund(orderID: order.id, reference: receipt.reference, at: receipt.capturedAt) else {
            throw ServiceError.conflict("not_paid", "order \(order.id) has no payment to refund")
        }
        try await markRefunded(order.id)
        return recorded.payment
    }

    /// `body(attempt)` until it returns or throws a `ServiceError` (its answer), with backoff
    /// between attempts (50 ms doubling); at most `maxCardAttempts`.
    func attempts<T: Sendable>(_ body: (Int) async throws -> T) async throws -> T {
        var attempt = 0
        while true {
            attempt += 1
            do {
                return try await body(attempt)
            } catch let error as ServiceError {
                throw error
            } catch  where attempt >= Self.maxCardAttempts {
                throw error
            } catch {
                try await Task.sleep(for: .milliseconds(50 << min(attempt - 1, 6)))
            }
        }
    }

    /// One attempt at round `round`'s charge. A refusal, or any failure on the last attempt, is
    /// recorded on the order and thrown as a 409; other failures are thrown for the caller's retry.
    func charge(_ order: Order, round: Int, attempt: Int, lastAttempt: Bool) async throws -> Payment {
        guard let (due, driver, kind) = Self.due(order) else {
            throw ServiceError.conflict("nothing_to_charge", "order \(order.id) owes nothing")
        }
        let share = Self.driverShare(of: due.amountCents, commissionPercent: commissionPercent)
        let receipt: ChargeReceipt
        do {
            receipt = try await provider.charge(
                ChargeRequest(
                    idempotencyKey: order.id, payerID: order.rider.id, payeeID: driver.id,
                    currency: due.currency, amountCents: due.amountCents, payeeShareCents: share, round: round))
        } catch let error as PaymentError {
            // Permanent (a declined card; instances configured with different commissions): retrying cannot help.
            try await markFailed(order, due: due, reason: "\(error)", round: round, attempts: attempt)
            throw ServiceError.conflict("payment_refused", "order \(order.id): \(error)")
        } catch  where lastAttempt && provider is any CardPaymentProvider {
            try await markFailed(
                order, due: due, reason: "not charged after \(attempt) attempts: \(error)", round: round, attempts: attempt)
            throw ServiceError.conflict("payment_failed", "order \(order.id): not charged after \(attempt) attempts: \(error)")
        }
        let payment = Payment(
            id: "pay-" + order.id, orderID: order.id, riderID: order.rider.id, driverID: driver.id, provider: provider.name,
            providerReference: receipt.reference, currency: due.currency, amountCents: due.amountCents,
            driverEarningsCents: share, commissionCents: due.amountCents - share, capturedAt: receipt.capturedAt, kind: kind)
        let recorded = try await store.recordPayment(payment).payment
        try await markPaid(order.id, round: round)
        try await (provider as? any CardPaymentProvider)?.clearFailure(orderID: order.id)
        return recorded
    }

    /// The order's payment when one is recorded, the order marked `payment: paid` (a crash may have
    /// come between the two writes).
    func recordedPayment(_ orderID: String) async throws -> Payment? {
        guard let existing = try await store.payment(orderID: orderID) else { return nil }
        try await markPaid(orderID)
        return existing
    }

    /// `payment: paid` on the order (once), with the round that paid — also when a concurrent ask
    /// found the payment recorded and marked the order paid first, not knowing the round.
    func markPaid(_ orderID: String, round: Int = 0) async throws {
        let (order, _) = try await store.change(id: orderID) { order in
            guard order.payment != .refunded else { return }
            order.payment = .paid
            order.paymentError = nil
            if round > (order.paymentRetries ?? 0) { order.paymentRetries = round }
        }
        if order.payment == .paid { relay?.notify() }
    }

    /// `payment: refunded` on the order (once).
    func markRefunded(_ orderID: String) async throws {
        _ = try await store.change(id: orderID) { $0.payment = .refunded }
        relay?.notify()
    }

    /// `payment: failed` on the order with its reason, and `order.payment_failed` for the rider —
    /// unless a later round decided already or the order was paid.
    func markFailed(_ order: Order, due: Fee, reason: String, round: Int, attempts: Int) async throws {
        try await (provider as? any CardPaymentProvider)?.recordFailure(orderID: order.id, reason: reason, attempts: attempts)
        let failed = PaymentFailed(
            orderID: order.id, riderID: order.rider.id, currency: due.currency, amountCents: due.amountCents,
            reason: reason, attempt: round, retriesLeft: max(0, Self.maxRetries - round))
        _ = try await store.change(
            id: order.id,
            sideEvents: { before, after in
                guard after.payment == .failed, before.payment != .failed || before.paymentRetries != after.paymentRetries else {
                    return []
                }
                return [OrderSideEvent(Events.orderPaymentFailed, data: failed)]
            },
            { order in
                guard order.payment == nil || order.payment == .failed, (order.paymentRetries ?? 0) <= round else { return }
                order.payment = .failed
                order.paymentError = String(reason.prefix(500))
                if round > 0 { order.paymentRetries = round }
            })
        relay?.notify()
    }
}
