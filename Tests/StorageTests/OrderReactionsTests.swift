import Bus
import Foundation
import Geo
import Logging
import RideContract
import RideModels
import ServiceStorage
import Storage
import Synchronization
import Testing
import Wire

@testable import OrdersService

/// Orders' reactions trust orders' store and trips, not the event (SQLite and PostgreSQL): a
/// forged `order.status` COMPLETED charges nobody, a genuine completion charges the stored fare
/// once, and an arrival moves an order only once trips says that trip arrived on its driver's device.
@Suite(.timeLimit(.minutes(2))) struct OrderReactionsTests {
    static let time = OrderStorageTests.time
    static let driver = User(id: "d1", role: .driver, name: "Dan", phoneNumber: "+15550101", deviceID: "dev1", createdAt: time)

    /// A trips service of scripted trips on an in-process bus, and the reactions calling it.
    final class Harness: Sendable {
        let store: any OrderStorage
        let cards = PaymentCaptureTests.ScriptedCards([])
        /// Trips by id, as the fake trips service has them.
        final class Trips: Sendable {
            let byID = Mutex<[String: Trip]>([:])
        }
        let trips = Trips()
        let reactions: OrderReactions
        private let bus: InProcessBus
        private let publisher: EventPublisher

        init(store: any OrderStorage) async throws {
            self.store = store
            var router = OpRouter(service: BusContract.Service.trips)
            router.on(Ops.Trips.get) { [trips] params, _ in
                guard let trip = trips.byID.withLock({ $0[params.tripID] }) else {
                    throw ServiceError.notFound("trip_not_found", "no trip \(params.tripID)")
                }
                return trip
            }
            bus = try await InProcessBus.start([router])
            // The relay is only woken here, never run: its publisher goes nowhere.
            publisher = try await EventPublisher(endpoint: "tcp://127.0.0.1:9", source: "orders", logger: testLogger)
            let relay = OutboxRelay(log: store.eventLog, publisher: publisher, source: "orders", logger: testLogger)
            reactions = OrderReactions(
                store: store, platform: bus.client, relay: relay,
                payments: PaymentCapture(store: store, provider: cards, commissionPercent: 20), logger: testLogger)
        }

        func close() async {
            await bus.close()
            await publisher.close()
        }

        /// The reactor's handling of `order.status` carrying `order` as the event says it is.
        func statusEvent(_ order: Order) async {
            let event = CloudEvent(
                source: "orders", type: Events.orderStatus.type, sequence: 1,
                data: LifecycleEvent.order(OrderStatusChanged(order: order, previousStatus: nil)))
            await OrdersReactor.handle(event, reactions: reactions, latency: nil) { _ in }
        }

        /// The reactor's handling of `trip.destination_arrival` for `tripID`, the event claiming it arrived for order o1's pickup.
        func arrival(_ tripID: String) async {
            let claimed = TripEvent(
                createdAt: time, deviceID: "dev1",
                data: .init(
                    value: "destination_arrival", tripID: tripID, tripMetadata: ["order_id": "o1", "leg": "pickup"], arrivedAt: time))
            let event = CloudEvent(
                source: "trips", type: Events.tripDestinationArrival.type, sequence: 1, data: LifecycleEvent.arrival(claimed))
            await OrdersReactor.handle(event, reactions: reactions, latency: nil) { _ in }
        }

        /// Trip `id` as trips has it: made for order o1's pickup on `device`, arrived or not.
        func trip(_ id: String, device: String = "dev1", orderID: String = "o1", arrived: Bool) {
            let trip = Trip(
                tripID: id, shareID: "s-\(id)", deviceID: device, status: .active, startedAt: time,
                destination: .init(
                    geometry: GeoJSONPoint(GeoPoint(latitude: 47.1, longitude: 30.2)), radius: 30, arrivedAt: arrived ? time : nil),
                metadata: ["order_id": .string(orderID), "leg": "pickup"])
            trips.byID.withLock { $0[id] = trip }
        }
    }

    static func withHarness(_ backend: Backend, _ body: (Harness) async throws -> Void) async throws {
        try await OrderStorageTests().withStore(backend) { store in
            let harness = try await Harness(store: store)
            do {
                try await body(harness)
            } catch {
                await harness.close()
                throw error
            }
            await harness.close()
        }
    }

    /// Order o1 of rider r1 with driver d1, at `status` (with a fare of 1 000 cents when `fare`).
    static func order(_ store: any OrderStorage, _ status: OrderStatus, fare: Bool = false, tripID: String? = nil) async throws -> Order {
        try await store.create(OrderStorageTests.order(id: "o1"))
        return try await store.change(id: "o1") { order in
            order.status = status
            order.driver = Self.driver
            order.tripID = tripID
            if fare { order.fare = Fare(currency: "EUR", totalCents: 1000, distanceMetres: 3000, durationSeconds: 600) }
        }.order
    }

    /// What a forger would put in the event: the order completed, another rider, another driver, another amount.
    static func forged(_ order: Order) -> Order {
        var forged = order
        forged.status = .completed
        forged.rider = User(id: "victim", role: .rider, name: "Vic", phoneNumber: "+15550199", createdAt: time)
        forged.driver = User(id: "mallory", role: .driver, name: "Mal", phoneNumber: "+15550198", createdAt: time)
        forged.fare = Fare(currency: "EUR", totalCents: 99_999, distanceMetres: 1, durationSeconds: 1)
        return forged
    }

    @Test(arguments: Backend.allCases)
    func aForgedCompletionChargesNothingAndRecordsNoPayment(backend: Backend) async throws {
        try await Self.withHarness(backend) { harness in
            let riding = try await Self.order(harness.store, .droppingOff, tripID: "t1")
            await harness.statusEvent(Self.forged(riding))
            var ghost = Self.forged(riding)
            ghost.id = "o-ghost"
            await harness.statusEvent(ghost)
            #expect(harness.cards.keys.isEmpty, "charged: \(harness.cards.keys)")
            #expect(try await harness.store.payment(orderID: "o1") == nil)
            #expect(try await harness.store.payment(orderID: "o-ghost") == nil)
            let stored = try #require(try await harness.store.order(id: "o1"))
            #expect(stored.status == .droppingOff && stored.payment == nil)
        }
    }

    @Test(arguments: Backend.allCases)
    func aGenuineCompletionChargesTheStoredFareOnce(backend: Backend) async throws {
        try await Self.withHarness(backend) { harness in
            let completed = try await Self.order(harness.store, .completed, fare: true)
            // Whatever the event carries, the stored order is charged; and once, however often it comes.
            await harness.statusEvent(Self.forged(completed))
            await harness.statusEvent(completed)
            #expect(harness.cards.keys == ["o1#0"])
            let payment = try #require(try await harness.store.payment(orderID: "o1"))
            #expect(
                payment.riderID == "r1" && payment.driverID == "d1" && payment.amountCents == 1000 && payment.driverEarningsCents == 800)
            #expect(try await harness.store.order(id: "o1")?.payment == .paid)
        }
    }

    @Test(arguments: Backend.allCases)
    func anArrivalMovesTheOrderOnlyWhenTripsSaysItsTripArrivedOnItsDriversDevice(backend: Backend) async throws {
        try await Self.withHarness(backend) { harness in
            _ = try await Self.order(harness.store, .pickingUp, tripID: "t1")
            await harness.arrival("t-unknown")
            harness.trip("t1", arrived: false)
            await harness.arrival("t1")
            #expect(try await harness.store.order(id: "o1")?.status == .pickingUp, "its trip has not arrived")
            harness.trip("t1", device: "someone-else", arrived: true)
            await harness.arrival("t1")
            harness.trip("t2", arrived: true)
            await harness.arrival("t2")
            harness.trip("t3", orderID: "o2", arrived: true)
            await harness.arrival("t3")
            #expect(try await harness.store.order(id: "o1")?.status == .pickingUp, "another device, not its current trip, another order's")
            harness.trip("t1", arrived: true)
            await harness.arrival("t1")
            #expect(try await harness.store.order(id: "o1")?.status == .reachedPickup)
        }
    }

    /// An arrival that comes before its order took the trip is retried until the order has (the
    /// trip arrived within milliseconds of being made); one whose trip has not arrived is not: it
    /// is nothing to wait for.
    @Test func anArrivalWhoseTripHasNotArrivedIsNotWaitedFor() async throws {
        try await Self.withHarness(.sqlite) { harness in
            _ = try await Self.order(harness.store, .accepted)
            harness.trip("t1", arrived: false)
            let handled = Task { await harness.arrival("t1") }
            let waited = Task {
                try? await Task.sleep(for: .seconds(10))
                handled.cancel()
            }
            await handled.value
            #expect(!handled.isCancelled, "still retrying after 10 s")
            waited.cancel()
            #expect(try await harness.store.order(id: "o1")?.status == .accepted)
        }
    }
}
