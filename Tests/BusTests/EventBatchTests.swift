import Foundation
import Testing
import Wire
import ZeroMQ

@testable import Bus

/// Events in one frame (`EventBatch`): the codec, how a publisher groups what it has queued, and
/// a forwarder in this process splitting batches for a subscriber over real sockets.
@Suite struct EventBatchTests {
    static func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

    static func split(_ batch: [UInt8]) -> [(topic: String, event: String)]? {
        batch.withUnsafeBytes { frame in
            EventBatch.split(frame).map { events in
                events.map { (String(decoding: frame[$0.topic], as: UTF8.self), String(decoding: frame[$0.event], as: UTF8.self)) }
            }
        }
    }

    @Test func eventsComeOutAsTheyWentIn() {
        var batch = EventBatch.start()
        let events = [("order.status.NEW", #"{"a":1}"#), ("trip.created", ""), ("o", String(repeating: "x", count: 70_000))]
        for (topic, event) in events { EventBatch.append(topic: Self.bytes(topic), event: Self.bytes(event), to: &batch) }
        #expect(batch.count == 1 + events.map { EventBatch.size(topic: Self.bytes($0.0), event: Self.bytes($0.1)) }.reduce(0, +))
        let out = Self.split(batch)
        #expect(out?.map(\.topic) == events.map(\.0))
        #expect(out?.map(\.event) == events.map(\.1))
    }

    @Test func aFrameThatIsNotAWholeBatchIsNone() {
        var good = EventBatch.start()
        EventBatch.append(topic: Self.bytes("order.x"), event: Self.bytes("{}"), to: &good)
        let broken: [(String, [UInt8])] = [
            ("no events", [0]),
            ("not a batch", Self.bytes("order.x")),
            ("an empty topic", [0, 0, 0, 0, 0, 2, 123, 125]),
            ("a topic past the end", [0, 40] + Self.bytes("order")),
            ("no room for the event's length", [0, 1, 111, 0, 0]),
            ("an event longer than what is left", Array(good.dropLast())),
            ("a length of 4 GiB", [0, 1, 111, 255, 255, 255, 255, 1]),
            ("bytes after the last event", good + [7]),
        ]
        for (what, frame) in broken { #expect(Self.split(frame) == nil, "\(what)") }
        #expect(Self.split(good)?.count == 1)
    }

    @Test func aPublisherBatchesWhatSomeoneHearsUpToTheLimit() {
        let queued = (0..<10).map {
            (topic: Self.bytes($0 % 2 == 0 ? "order.\($0)" : "chat.\($0)"), event: [UInt8](repeating: 1, count: 100))
        }
        let messages = EventBatch.messages(queued, subscriptions: SubscribedPrefixes([Self.bytes("order.")]), limit: 250)
        // Five events are heard, two fit a batch of 250 bytes; the five unheard are accounted for last.
        #expect(messages.map(\.events) == [2, 2, 1, 5])
        #expect(messages.map(\.frames.count) == [1, 1, 1, 0])
        let topics = messages.flatMap { $0.frames.first.flatMap(Self.split)?.map(\.topic) ?? [] }
        #expect(topics == ["order.0", "order.2", "order.4", "order.6", "order.8"])
        // An empty subscription hears everything; an event larger than a batch goes in its two frames.
        let large = [(topic: Self.bytes("order.big"), event: [UInt8](repeating: 2, count: 300))] + queued.prefix(1)
        let framed = EventBatch.messages(large, subscriptions: SubscribedPrefixes([[]]), limit: 250)
        #expect(framed.map(\.frames.count) == [2, 1])
        #expect(framed[0].frames[0] == Self.bytes("order.big"))
    }

    /// Through a forwarder: every event arrives once, in order, split from batches (counted); a
    /// forwarder that does not ask for batches gets none and forwards the same.
    @Test(arguments: [true, false]) func aSubscriberHearsEveryEventOnceInOrder(batches: Bool) async throws {
        let forwarder = EventForwarder(batches: batches, logger: quietLogger)
        let (ingress, egress) = try await forwarder.start(ingress: "tcp://127.0.0.1:*", egress: "tcp://127.0.0.1:*", highWaterMark: 100_000)
        let subscriber = try await EventSubscriber<JSONValue>(endpoint: egress, prefixes: ["order."], logger: quietLogger)
        let publisher = try await EventPublisher(endpoint: ingress, source: "orders", logger: quietLogger)
        #expect(await publisher.waitForSubscriber(to: "order.x", timeout: .seconds(30)))
        let first = publisher.nextSequence
        for i in 0..<300 {
            try publisher.publish(topic: i % 3 == 0 ? "chat.\(i)" : "order.\(i)", type: "t", data: ["i": .number(Double(i))] as JSONValue)
        }
        try publisher.publish(topic: "order.done", type: "done", data: JSONValue.null)
        var sequences: [UInt64] = []
        var iterator = subscriber.deliveries.makeAsyncIterator()
        outer: while let delivered = await iterator.next() {
            for case .event(let event) in delivered where event.event.sequence >= first {
                sequences.append(event.event.sequence)
                if event.topic == "order.done" { break outer }
            }
        }
        // Every third event is a chat's, which nobody hears; the last is order.done.
        let heard: [UInt64] = (0..<UInt64(300)).filter { $0 % 3 != 0 }.map { first + $0 } + [first + 300]
        #expect(sequences == heard)
        #expect(batches ? forwarder.stats.batches > 0 : forwarder.stats.batches == 0)
        await publisher.close()
        await subscriber.close()
        forwarder.stop()
        await forwarder.join()
    }

    /// A commit's events published together (one wake of the sending thread) arrive in order; a
    /// list with a topic that is not valid queues none of them.
    @Test func eventsPublishedTogetherArriveInOrderAndABadTopicQueuesNone() async throws {
        let forwarder = EventForwarder(batches: true, logger: quietLogger)
        let (ingress, egress) = try await forwarder.start(ingress: "tcp://127.0.0.1:*", egress: "tcp://127.0.0.1:*", highWaterMark: 100_000)
        let subscriber = try await EventSubscriber<JSONValue>(endpoint: egress, prefixes: ["device."], logger: quietLogger)
        let publisher = try await EventPublisher(endpoint: ingress, source: "tracking", logger: quietLogger)
        #expect(await publisher.waitForSubscriber(to: "device.x", timeout: .seconds(30)))
        func event(_ sequence: UInt64) -> [UInt8] {
            EnvelopeWriter.write(
                id: "e\(sequence)", source: "tracking", type: "t", time: Date(), sequence: sequence, data: Array("{}".utf8))
        }
        #expect(throws: EventPublisher.PublishError.self) {
            try publisher.publish(encodedEvents: [("device.location.a", event(1)), ("device location", event(2))])
        }
        try publisher.publish(encodedEvents: (1...50).map { (topic: "device.location.\($0 % 5)", event: event(UInt64($0))) })
        var sequences: [UInt64] = []
        var iterator = subscriber.deliveries.makeAsyncIterator()
        outer: while let delivered = await iterator.next() {
            for case .event(let event) in delivered {
                sequences.append(event.event.sequence)
                if sequences.count == 50 { break outer }
            }
        }
        #expect(sequences == Array(1...50))
        #expect(publisher.counts.published == 50)
        await publisher.close()
        await subscriber.close()
        forwarder.stop()
        await forwarder.join()
    }

    /// A malformed batch is dropped whole and counted; a subscriber may not subscribe to what
    /// would ask publishers for batches.
    @Test func aMalformedBatchAndABatchSubscriptionAreRefused() async throws {
        let forwarder = EventForwarder(logger: quietLogger)
        let (ingress, egress) = try await forwarder.start(ingress: "tcp://127.0.0.1:*", egress: "tcp://127.0.0.1:*", highWaterMark: 1000)
        let subscriber = try await EventSubscriber<JSONValue>(endpoint: egress, prefixes: ["order."], logger: quietLogger)
        func waitUntil(_ condition: () -> Bool) async throws {
            let deadline = ContinuousClock.now + .seconds(30)
            while !condition(), ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(50)) }
        }
        let broken = RepeatingSender(endpoint: ingress, message: [[0, 7] + Self.bytes("order.x") + [0, 0, 0, 9] + Self.bytes("{}")])
        try await waitUntil { forwarder.stats.malformedBatches >= 3 }
        await broken.stop()
        let afterBatches = forwarder.stats
        #expect(afterBatches.malformedBatches >= 3)
        #expect(afterBatches.forwarded == 0 && afterBatches.batches == 0)
        let asking = RepeatingSender(endpoint: egress, message: [[1, EventBatch.prefix]], type: .xsub)
        try await waitUntil { forwarder.stats.rejected > afterBatches.rejected }
        await asking.stop()
        #expect(forwarder.stats.rejected > afterBatches.rejected)
        #expect(forwarder.stats.subscriptions == afterBatches.subscriptions, "the batch subscription took no effect")
        await subscriber.close()
        forwarder.stop()
        await forwarder.join()
    }
}
