import Foundation
import Synchronization
import Wire

@testable import Bus

/// A bus as a reactor's test needs it: messages go through the subscriber's own decoding and
/// tracking (`EventSubscriber.decode`, `SequenceTracker`), one batch each, in the order sent.
final class TestFeed<Payload: Decodable & Sendable>: EventFeed {
    let deliveries: AsyncStream<[Delivery<Payload>]>
    private let continuation: AsyncStream<[Delivery<Payload>]>.Continuation
    private let tracker = Mutex(SequenceTracker())

    init() { (deliveries, continuation) = AsyncStream.makeStream() }

    /// Sends an event as its publisher put it on the bus.
    func send(_ event: CloudEvent<JSONValue>, topic: String? = nil) throws {
        send(frames: [Array((topic ?? event.type + ".").utf8), try event.encoded()])
    }

    /// Sends an event nobody's log has: `source`'s, at `sequence`, about order `orderID` (or carrying `data`).
    func forge(
        source: String = "orders", sequence: UInt64, orderID: String = "forged", type: String = "order.status", data: [UInt8]? = nil,
        id: String = EventID.next()
    ) {
        let data = data ?? Array(#"{"order":{"id":"\#(orderID)"}}"#.utf8)
        send(frames: [
            Array("\(type).".utf8), EnvelopeWriter.write(id: id, source: source, type: type, time: Date(), sequence: sequence, data: data),
        ])
    }

    func send(frames: [[UInt8]]) {
        let delivery = tracker.withLock { EventSubscriber<Payload>.decode(frames, tracker: &$0, sourceRule: nil) }
        continuation.yield([delivery])
    }

    /// Where the subscriber's tracker stands for `source`.
    func last(of source: String) -> UInt64? { tracker.withLock { $0.lastSequence(of: source) } }

    func expect(source: String, after sequence: UInt64) { tracker.withLock { $0.expect(source: source, after: sequence) } }

    func close() async { continuation.finish() }
}
