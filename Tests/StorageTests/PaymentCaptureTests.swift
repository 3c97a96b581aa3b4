import Bus
import Foundation
import RideModels
import Storage
import Synchronization
import Testing
import Wire

@testable import OrdersService

/// `PaymentCapture`'s rules on a real store (SQLite and PostgreSQL): a failed charge marks the
/// order and tells the rider once per failure, the reactor's replay charges nothing more, the
/// rider's charges again are bounded and keyed apart, and a ride is paid once however many ask.
@Suite struct PaymentCaptureTests {
    /// A card provider whose answers are scripted: each charge takes the next (`nil` pays); a paid
    /// key answers its first receipt again, as a card processor's idempotency keys do.
    final class ScriptedCards: CardPaymentProvider {
        let name = "scripted"
        private let state = Mutex<(script: [PaymentError?], seen: [String], paid: [String: ChargeReceipt], failures: [String: String])>(
            ([], [], [:], [:]))

        init(_ script: [PaymentError?]) { state.withLock { $0.script = script } }

        var keys: [String] { state.withLock { $0.seen } }

        func charge(_ request: ChargeRequest) async throws -> ChargeReceipt {
            let key = "\(request.idempotencyKey)#\(request.round)"
            return try state.withLock { state in
                state.seen.append(key)
                if let receipt = state.paid[key] { return receipt }
                let next = state.script.isEmpty ? nil : state.script.removeFirst()
                if let next { throw next }
                let receipt = ChargeReceipt(reference: "ch-\(key)", capturedAt: Date(timeIntervalSince1970: 1_790_000_100))
                state.paid[key] = receipt
                return receipt
            }
        }

        func refund(_ request: RefundRequest) async throws -> ChargeReceipt {
            ChargeReceipt(reference: "re-\(request.chargeReference)", capturedAt: Date(timeIntervalSince1970: 1_790_000_200))
        }
        func paymentSheet(riderID: String) async throws -> PaymentSheet { throw PaymentError.declined("not here") }
        func cards(riderID: String) async throws -> SavedCards { SavedCards(cards: []) }
        func cardSetup(riderID: String, successURL: String, cancelURL: String) async throws -> CardSetup {
            throw PaymentError.declined("not here")
        }
        func payoutOnboarding(driverID: String) async throws -> PayoutOnboarding { throw PaymentError.declined("not here") }
        func webhook(_ params: ProviderWebhookParams) async throws -> ProviderWebhookReceipt { throw PaymentError.declined("not here") }
        func recordFailure(orderID: String, reason: String, attempts: Int) async throws { state.withLock { $0.failures[orderID] = reason } }
        func clearFailure(orderID: String) async throws { _ = state.withLock { $0.failures.removeValue(forKey: orderID) } }
        func failedCharges() async throws -> Int { state.withLock { $0.failures.count } }
    }

    /// A completed ride of 1 000 cents in `store`.
    static func completed(_ store: any OrderStorage, id: String = "o1") async throws -> Order {
        try await store.create(OrderStorageTests.order(id: id))
        return try await store.change(id: id) { order in
            order.status = .completed
            order.driver = User(id: "d1", role: .driver, name: "Dan", phoneNumber: "+15550101", createdAt: OrderStorageTests.time)
            order.fare = Fare(currency: "EUR", totalCents: 1000, distanceMetres: 3000, durationSeconds: 600)
        }.order
    }

    func failures(_ store: any OrderStorage) async throws -> [PaymentFailed] {
        try await store.eventLog.page(source: "orders", query: EventsQuery(after: 0, limit: 1000)).events
            .filter { $0.type == "order.payment_failed" }.map { try $0.data.decode(PaymentFailed.self) }
    }

    @Test(arguments: Backend.allCases)
    func aFailedChargeIsMarkedOnceAndTheRiderRetriesABoundedNumberOfTimes(backend: Backend) async throws {
        try await OrderStorageTests().withStore(backend) { store in
            let cards = ScriptedCards(Array(repeating: PaymentError.declined("card declined"), count: 1 + PaymentCapture.maxRetries))
            let capture = PaymentCapture(store: store, provider: cards, commissionPercent: 20)
            let order = try await Self.completed(store)
            await #expect(throws: ServiceError.self) { try await capture.capture(orderID: order.id) }
            var stored = try #require(try await store.order(id: "o1"))
            #expect(stored.status == .completed && stored.payment == .failed && stored.paymentError?.contains("card declined") == true)
            #expect(try await cards.failedCharges() == 1)
            // The reactor's replay of the completion charges nothing more and tells nobody again.
            #expect(try await capture.capture(orderID: order.id) == nil)
            #expect(cards.keys == ["o1#0"])
            #expect(try await failures(store).map(\.attempt) == [0])

            for round in 1...PaymentCapture.maxRetries {
                let error = await #expect(throws: ServiceError.self) {
                    try await capture.retry(try #require(try await store.order(id: "o1")))
                }
                #expect(error?.code == "payment_refused")
                stored = try #require(try await store.order(id: "o1"))
                #expect(stored.payment == .failed && stored.paymentRetries == round)
            }
            let exhausted = await #expect(throws: ServiceError.self) { try await capture.retry(stored) }
            #expect(exhausted?.code == "payment_retries_exhausted")
            #expect(cards.keys == (0...PaymentCapture.maxRetries).map { "o1#\($0)" }, "each round keyed apart, none beyond the bound")
            let told = try await failures(store)
            #expect(told.map(\.attempt) == Array(0...PaymentCapture.maxRetries), "one notice per failed charge")
            #expect(told.last?.retriesLeft == 0 && told.first?.retriesLeft == PaymentCapture.maxRetries)
            #expect(try await store.payment(orderID: "o1") == nil)
        }
    }

    @Test(arguments: Backend.allCases)
    func ridersAskingAtOnceArePaidOnceAndThePaymentStands(backend: Backend) async throws {
        try await OrderStorageTests().withStore(backend) { store in
            let cards = ScriptedCards([PaymentError.declined("card declined")])
            let capture = PaymentCapture(store: store, provider: cards, commissionPercent: 20)
            await #expect(throws: ServiceError.self) { try await capture.capture(orderID: try await Self.completed(store).id) }
            let failed = try #require(try await store.order(id: "o1"))
            let payments = try await withThrowingTaskGroup(of: Payment.self) { group in
                for _ in 0..<3 { group.addTask { try await capture.retry(failed) } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(Set(payments.map(\.providerReference)) == ["ch-o1#1"], "one charge, round 1, for every ask")
            #expect(Set(cards.keys.dropFirst()) == ["o1#1"])
            let paid = try #require(try await store.order(id: "o1"))
            #expect(paid.payment == .paid && paid.paymentError == nil && paid.paymentRetries == 1)
            #expect(payments.first?.driverEarningsCents == 800)
            #expect(try await cards.failedCharges() == 0)
            // Asked again once paid: the payment stands; a ride never failed cannot be made again.
            #expect(try await capture.retry(paid) == payments.first)
            let other = try await Self.completed(store, id: "o2")
            #expect(try await capture.capture(orderID: other.id)?.providerReference == "ch-o2#0")
            #expect(try await store.order(id: "o2")?.payment == .paid)
            let uncharged = try await Self.completed(store, id: "o3")
            let refused = await #expect(throws: ServiceError.self) { try await capture.retry(uncharged) }
            #expect(refused?.code == "payment_not_failed")
        }
    }

    /// The interleaving of concurrent asks that lost the paying round: one ask finds the payment
    /// recorded and marks the order paid (not knowing the round) before the ask that charged does.
    @Test(arguments: Backend.allCases)
    func theRoundThatPaidIsKeptWhicheverAskMarksTheOrderPaidFirst(backend: Backend) async throws {
        try await OrderStorageTests().withStore(backend) { store in
            let capture = PaymentCapture(
                store: store, provider: ScriptedCards([PaymentError.declined("card declined")]), commissionPercent: 20)
            await #expect(throws: ServiceError.self) { try await capture.capture(orderID: try await Self.completed(store).id) }
            try await capture.markPaid("o1")
            try await capture.markPaid("o1", round: 2)
            try await capture.markPaid("o1", round: 1)
            let paid = try #require(try await store.order(id: "o1"))
            #expect(paid.payment == .paid && paid.paymentError == nil && paid.paymentRetries == 2)
        }
    }

    /// A cancellation with a fee is charged as a ride is (kind `cancellation_fee`); a refund gives
    /// it back once, with one `order.refunded`, and the driver's earnings no longer count it.
    @Test(arguments: Backend.allCases)
    func aCancellationFeeIsChargedAndRefundedOnce(backend: Backend) async throws {
        try await OrderStorageTests().withStore(backend) { store in
            let capture = PaymentCapture(store: store, provider: ScriptedCards([]), commissionPercent: 20)
            try await store.create(OrderStorageTests.order(id: "o1"))
            let unpaid = await #expect(throws: ServiceError.self) {
                try await capture.refund(try #require(try await store.order(id: "o1")))
            }
            #expect(unpaid?.code == "not_paid")
            let cancelled = try await store.change(id: "o1") { order in
                order.status = .cancelled
                order.driver = User(id: "d1", role: .driver, name: "Dan", phoneNumber: "+15550101", createdAt: OrderStorageTests.time)
                order.cancellationFee = Fee(currency: "EUR", amountCents: 500)
            }.order
            let fee = try #require(try await capture.capture(orderID: cancelled.id))
            #expect(fee.kind == Payment.cancellationFee && fee.amountCents == 500 && fee.driverEarningsCents == 400)
            #expect(try await store.earnings(driverID: "d1", from: "2000-01-01").first?.earningsCents == 400)
            let refunds = try await withThrowingTaskGroup(of: Payment.self) { group in
                for _ in 0..<2 { group.addTask { try await capture.refund(cancelled) } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(Set(refunds.map(\.refundReference)) == ["re-\(fee.providerReference)"] && refunds.allSatisfy { $0.refundedAt != nil })
            #expect(try await store.order(id: "o1")?.payment == .refunded)
            #expect(try await store.earnings(driverID: "d1", from: "2000-01-01").first?.earningsCents == 0)
            let events = try await store.eventLog.page(source: "orders", query: EventsQuery(after: 0, limit: 1000)).events
            #expect(events.filter { $0.type == "order.refunded" }.count == 1)
            // Nothing owed: an open order, or a cancellation without a fee.
            try await store.create(OrderStorageTests.order(id: "o2", rider: "r2"))
            #expect(try await capture.capture(orderID: "o2") == nil)
        }
    }
}
