import Bus
import Foundation
import Storage
import Synchronization
import Testing
import Wire

@testable import OrdersService
@testable import ServiceStorage

/// `EventReactor` against forged events, with orders' store (SQLite, PostgreSQL) as the
/// publisher's log and the reactor's cursors: a forged event is refused or, taken unverified,
/// cannot keep the genuine one from being handled; no sequence on the bus moves the reactor past,
/// or back over, what the publisher's log has.
@Suite(.timeLimit(.minutes(2))) struct EventReactorTests {
    /// One event as a handler saw it.
    struct Seen: Equatable, CustomStringConvertible {
        var sequence: UInt64
        var id: String
        var orderID: String?
        var description: String { "\(sequence):\(orderID ?? "-")" }
    }

    /// A reactor following `store`'s own log through `feed`, and what it handled.
    final class Harness: Sendable {
        let store: any OrderStorage
        let feed = TestFeed<JSONValue>()
        let refusals = RefusedEvents()
        private let handled = Mutex<[Seen]>([])
        private let running = Mutex<Task<Void, any Error>?>(nil)
        /// Where the reactor reads the log (swapped to tell a log that started over).
        let log: Mutex<any OrderStorage>

        init(store: any OrderStorage) {
            self.store = store
            log = Mutex(store)
        }

        func start(verifies: Bool = false) async throws {
            let all: @Sendable (CloudEvent<JSONValue>) -> Bool = { _ in true }
            let reactor = EventReactor<JSONValue>(
                name: "test", sources: ["orders"], cursors: store, subscriber: feed, logger: testLogger, verifies: verifies ? all : nil,
                refusals: refusals,
                fetch: { source, after, limit in
                    try await self.log.withLock { $0 }.eventLog.page(source: source, query: EventsQuery(after: after, limit: limit))
                },
                handle: { event in
                    self.handled.withLock {
                        $0.append(Seen(sequence: event.sequence, id: event.id, orderID: event.data["order"]?["id"]?.stringValue))
                    }
                })
            running.withLock { $0 = Task { try await reactor.run() } }
            // Caught up: the tracker was told where the log stands.
            #expect(await eventually { self.feed.last(of: "orders") != nil })
        }

        /// Ends the reactor (its handlers finished, its cursor saved).
        func stop() async throws {
            await feed.close()
            try await running.withLock { $0 }?.value
        }

        var seen: [Seen] { handled.withLock { $0 } }

        /// Creates orders `ids` (an `order.status` event each in the log); their events as the log has them.
        @discardableResult
        func create(_ ids: String...) async throws -> [CloudEvent<JSONValue>] {
            let before = try await store.eventLog.page(source: "orders", query: EventsQuery(after: 0, limit: 1)).lastSequence
            for id in ids { try await store.create(OrderStorageTests.order(id: id, rider: "r-\(id)")) }
            return try await store.eventLog.page(source: "orders", query: EventsQuery(after: before, limit: 1000)).events
        }

        func handledCount(_ sequence: UInt64) -> Int { seen.filter { $0.sequence == sequence && $0.orderID != "forged" }.count }
    }

    static func withHarness(_ backend: Backend, _ body: (Harness) async throws -> Void) async throws {
        try await OrderStorageTests().withStore(backend) { store in try await body(Harness(store: store)) }
    }

    @Test(arguments: Backend.allCases)
    func aForgedFarAheadEventIsRefusedAndTheGenuineEventsAfterItAreAllHandled(backend: Backend) async throws {
        try await Self.withHarness(backend) { harness in
            try await harness.create("o1", "o2", "o3")
            try await harness.start()
            harness.feed.forge(sequence: 1 << 62)
            // Genuine events right behind it, before the reactor has refused it, and after.
            let next = try await harness.create("o4")
            try harness.feed.send(next[0])
            #expect(await eventually { harness.refusals.total(.farAhead) == 1 })
            for event in try await harness.create("o5", "o6") { try harness.feed.send(event) }
            #expect(await eventually { (1...6).allSatisfy { harness.handledCount($0) >= 1 } }, "\(harness.seen)")
            #expect(!harness.seen.contains { $0.orderID == "forged" }, "the forged event was handled")
            #expect(harness.feed.last(of: "orders") == 6, "the subscriber's tracker was set back")
            try await harness.stop()
            #expect(try await harness.store.reactorCursor(source: "orders") == 6)
        }
    }

    @Test(arguments: Backend.allCases)
    func aForgedSequenceOneIsRefusedAndMakesNoHistoryRefetch(backend: Backend) async throws {
        try await Self.withHarness(backend) { harness in
            try await harness.create("o1", "o2", "o3")
            try await harness.start()
            #expect(await eventually { harness.handledCount(3) == 1 })
            harness.feed.forge(sequence: 1)
            for event in try await harness.create("o4", "o5") { try harness.feed.send(event) }
            #expect(await eventually { harness.handledCount(5) == 1 }, "\(harness.seen)")
            try await harness.stop()
            #expect((1...5).map { harness.handledCount($0) } == [1, 1, 1, 1, 1], "each once: nothing read again, \(harness.seen)")
            #expect(harness.refusals.total(.restart) == 1)
            #expect(!harness.seen.contains { $0.orderID == "forged" })
            #expect(try await harness.store.reactorCursor(source: "orders") == 5)
        }
    }

    /// A reactor that takes the next event from the bus as it comes may take a forged one (its
    /// handlers read what they act on); the genuine event at that sequence is handled all the same,
    /// whether it comes after the forged one or before.
    @Test(arguments: Backend.allCases)
    func aForgedEventAtTheNextSequenceDoesNotSuppressTheGenuineOne(backend: Backend) async throws {
        try await Self.withHarness(backend) { harness in
            try await harness.create("o1")
            try await harness.start()
            harness.feed.forge(sequence: 2)
            let genuine = try await harness.create("o2")
            try harness.feed.send(genuine[0])
            #expect(await eventually { harness.handledCount(2) >= 1 }, "\(harness.seen)")
            // After the genuine one: at a sequence handled as the log has it, so ignored.
            harness.feed.forge(sequence: 2, orderID: "forged")
            for event in try await harness.create("o3") { try harness.feed.send(event) }
            #expect(await eventually { harness.handledCount(3) == 1 })
            try await harness.stop()
            #expect(harness.seen.filter { $0.orderID == "forged" }.count == 1, "only the one taken before the genuine came")
            #expect(harness.seen.filter { $0.sequence == 2 && $0.orderID == "o2" }.allSatisfy { $0.id == genuine[0].id })
        }
    }

    /// Kinds a reactor verifies are handled as the log has them: a forged event is never handled,
    /// whatever its sequence, and the genuine one at that sequence is.
    @Test(arguments: Backend.allCases)
    func aVerifyingReactorHandlesNothingItsLogDoesNotHave(backend: Backend) async throws {
        try await Self.withHarness(backend) { harness in
            try await harness.create("o1")
            try await harness.start(verifies: true)
            harness.feed.forge(sequence: 2)
            #expect(await eventually { harness.refusals.total(.farAhead) == 1 })
            let genuine = try await harness.create("o2")
            try harness.feed.send(genuine[0])
            harness.feed.forge(sequence: 2)
            harness.feed.forge(sequence: 3, id: genuine[0].id)  // a genuine id on a forged event: not the log's at 3
            for event in try await harness.create("o3") { try harness.feed.send(event) }
            #expect(await eventually { harness.handledCount(3) == 1 }, "\(harness.seen)")
            try await harness.stop()
            #expect(!harness.seen.contains { $0.orderID == "forged" }, "\(harness.seen)")
            #expect((1...3).allSatisfy { harness.handledCount($0) >= 1 })
        }
    }

    /// Forged events taken as the next ones, beyond what the log has: once the genuine event shows
    /// the log is behind them, the reactor goes back, and its stored cursor never covers them.
    @Test(arguments: Backend.allCases)
    func forgedEventsTakenBeyondTheLogNeverReachTheStoredCursor(backend: Backend) async throws {
        try await Self.withHarness(backend) { harness in
            try await harness.create("o1")
            try await harness.start()
            harness.feed.forge(sequence: 2)
            harness.feed.forge(sequence: 3)
            #expect(await eventually { harness.seen.filter { $0.orderID == "forged" }.count == 2 })
            try harness.feed.send(try await harness.create("o2")[0])
            #expect(await eventually { harness.handledCount(2) == 1 })
            try await harness.stop()
            #expect(try await harness.store.reactorCursor(source: "orders") == 2, "not 3: sequence 3 of the log is still to come")
            #expect(harness.feed.last(of: "orders") == 2)
        }
    }

    @Test(arguments: Backend.allCases)
    func aGapIsFilledFromTheLogAndCopiesAreHandledOnce(backend: Backend) async throws {
        try await Self.withHarness(backend) { harness in
            try await harness.start()
            let events = try await harness.create("o1", "o2", "o3", "o4")
            try harness.feed.send(events[0])
            try harness.feed.send(events[0])
            try harness.feed.send(events[3])  // 2 and 3 lost on the bus
            try harness.feed.send(events[3])
            #expect(await eventually { harness.handledCount(4) >= 1 })
            try await harness.stop()
            #expect((1...4).map { harness.handledCount($0) } == [1, 1, 1, 1], "\(harness.seen)")
            #expect(harness.refusals.total(.farAhead) + harness.refusals.total(.conflict) == 0)
        }
    }

    /// A publisher whose log really started over (its store replaced) is followed from its new
    /// start; the claim is checked against the log, not believed from the bus.
    @Test func aLogThatReallyStartedOverIsReadFromItsStart() async throws {
        try await Self.withHarness(.sqlite) { harness in
            try await harness.create("o1", "o2", "o3")
            try await harness.start()
            #expect(await eventually { harness.handledCount(3) == 1 })
            try await OrderStorageTests().withStore(.sqlite) { fresh in
                try await fresh.create(OrderStorageTests.order(id: "n1", rider: "r-n1"))
                try await fresh.create(OrderStorageTests.order(id: "n2", rider: "r-n2"))
                harness.log.withLock { $0 = fresh }
                let first = try await fresh.eventLog.page(source: "orders", query: EventsQuery(after: 0, limit: 1)).events[0]
                try harness.feed.send(first)
                #expect(await eventually { harness.seen.contains { $0.orderID == "n2" } }, "\(harness.seen)")
                try await harness.stop()
            }
            #expect(harness.refusals.total(.restart) == 0)
        }
    }
}

/// Polls `condition` until it holds or `timeout` passes.
func eventually(_ timeout: Duration = .seconds(20), _ condition: () async throws -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if (try? await condition()) == true { return true }
        try? await Task.sleep(for: .milliseconds(20))
    }
    return (try? await condition()) == true
}
