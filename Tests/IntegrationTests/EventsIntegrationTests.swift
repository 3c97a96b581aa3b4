import Bus
import Foundation
import ServiceKit
import Testing
import Wire

/// Pub/sub through a real `ride-bus`.
@Suite(.timeLimit(.minutes(2))) struct EventsIntegrationTests {
    struct Numbered: Codable, Sendable { var n: Int }

    @Test func subscribersGetOnlyTheirPrefixes() async throws {
        try await withTestBus("prefixes") { bus in
            let orders = try await EventSubscriber<JSONValue>(endpoint: bus.egress, prefixes: ["order."], logger: testLogger)
            let trips = try await EventSubscriber<JSONValue>(endpoint: bus.egress, prefixes: ["trip.created"], logger: testLogger)
            let publisher = try await EventPublisher(endpoint: bus.ingress, source: "test", logger: testLogger)
            #expect(await publisher.waitForSubscriber(to: "order.status.NEW"))
            #expect(await publisher.waitForSubscriber(to: "trip.created"))
            for topic in ["order.status.NEW", "trip.created", "trip.eta", "user.registered", "order.status.ACCEPTED", "trip.created"] {
                try publisher.publish(topic: topic, type: "test", data: ["topic": .string(topic)] as JSONValue)
            }
            #expect(try await collect(orders, count: 2).map(\.topic) == ["order.status.NEW", "order.status.ACCEPTED"])
            #expect(try await collect(trips, count: 2).map(\.topic) == ["trip.created", "trip.created"])
            await publisher.close()
            await orders.close()
            await trips.close()
        }
    }

    @Test func tenThousandEventsArriveInOrderWithNoGap() async throws {
        try await withTestBus("ten-thousand") { bus in
            let subscriber = try await EventSubscriber<Numbered>(endpoint: bus.egress, prefixes: ["load."], logger: testLogger)
            let publisher = try await EventPublisher(endpoint: bus.ingress, source: "load", logger: testLogger)
            #expect(await publisher.waitForSubscriber(to: "load.n"))
            for n in 1...10_000 {
                try publisher.publish(topic: "load.n", type: "load", data: Numbered(n: n))
            }
            let events = try await collect(subscriber, count: 10_000)
            #expect(events.map(\.event.data.n) == Array(1...10_000))
            #expect(events.map(\.event.sequence) == Array(1...10_000).map(UInt64.init))
            #expect(events.first?.sequence == .first)
            #expect(events.dropFirst().allSatisfy { $0.sequence == .next }, "no gap, no duplicate")
            #expect(try await bus.waitForMetric("ride_bus_events_forwarded_total", atLeast: 10_000) >= 10_000)
            await publisher.close()
            await subscriber.close()
        }
    }

    @Test func aMalformedEventIsReportedAndSkipped() async throws {
        try await withTestBus("malformed") { bus in
            let subscriber = try await EventSubscriber<Numbered>(endpoint: bus.egress, prefixes: ["mixed."], logger: testLogger)
            let publisher = try await EventPublisher(endpoint: bus.ingress, source: "mixed", logger: testLogger)
            #expect(await publisher.waitForSubscriber(to: "mixed.x"))
            try publisher.publish(topic: "mixed.x", type: "t", data: Numbered(n: 1))
            try publisher.publish(topic: "mixed.x", encodedEvent: Array(#"{"specversion":"1.0"}"#.utf8))
            try publisher.publish(topic: "mixed.x", type: "t", data: ["n": "not a number"] as JSONValue)
            try publisher.publish(topic: "mixed.x", type: "t", data: Numbered(n: 4))
            var good: [Int] = []
            var bad: [String] = []
            var iterator = subscriber.deliveries.makeAsyncIterator()
            while good.count + bad.count < 4, let batch = await iterator.next() {
                for delivery in batch {
                    switch delivery {
                    case .event(let e): good.append(e.event.data.n)
                    case .malformed(let m): bad.append(m.reason)
                    }
                }
            }
            #expect(good == [1, 4])
            #expect(bad.count == 2)
            #expect(bad[0].contains("id: required attribute is missing"), "\(bad[0])")
            #expect(bad[1].contains("data.n"), "\(bad[1])")
            await publisher.close()
            await subscriber.close()
        }
    }
}
