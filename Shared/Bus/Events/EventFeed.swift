/// Where a consumer reads events from: a subscriber to the bus (`EventSubscriber`) or, in tests, a
/// feed of crafted messages through the same decoding and tracking.
public protocol EventFeed<Payload>: Sendable {
    associatedtype Payload: Sendable
    associatedtype Batches: AsyncSequence<[Delivery<Payload>], Never> & Sendable
    /// Batches of deliveries; iterate it from one task. It ends when the feed is closed.
    var deliveries: Batches { get }
    /// Tells the gap detector where `source` stands (`EventSubscriber.expect`).
    func expect(source: String, after sequence: UInt64)
    func close() async
}

extension EventSubscriber: EventFeed {}
