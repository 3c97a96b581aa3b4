/// Several events in one frame, from one of our publishers to `ride-bus`, which splits them back
/// into `[topic][event]` messages for its subscribers (docs/design.md#events-in-batches).
///
/// On a CURVE connection every frame is sealed and opened on its own, however short: an event in
/// its two frames costs four box operations on its way into the bus, a batch of n events two for
/// all n. The bus asks for batches by subscribing to `prefix` (a byte no topic starts with) on its
/// ingress, so a publisher sends them only to a bus that splits them; any other publisher (pyzmq,
/// a C proxy's peers) keeps the two frames, which the bus forwards as it always has.
///
/// A batch is `prefix`, then per event: the topic's length (one byte), the topic, the event's
/// length (four bytes, big-endian) and the event.
public enum EventBatch {
    /// The first byte of a batch, and the subscription by which the bus asks for batches.
    public static let prefix: UInt8 = 0
    /// The subscription message a bus sends upstream to ask for batches (`\u{1}` + `prefix`).
    public static let subscription: [UInt8] = [1, prefix]

    /// The bytes one event adds to a batch.
    public static func size(topic: [UInt8], event: [UInt8]) -> Int { 1 + topic.count + 4 + event.count }

    /// Appends one event to `batch` (which starts with `prefix`: `start()`).
    public static func append(topic: [UInt8], event: [UInt8], to batch: inout [UInt8]) {
        precondition(topic.count <= Int(UInt8.max), "a topic is at most 255 bytes (Topic.problem)")
        batch.append(UInt8(topic.count))
        batch.append(contentsOf: topic)
        let length = UInt32(event.count)
        batch.append(contentsOf: [UInt8(length >> 24), UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF)])
        batch.append(contentsOf: event)
    }

    /// A new batch, reserving `capacity` bytes.
    public static func start(capacity: Int = 0) -> [UInt8] {
        var batch: [UInt8] = []
        batch.reserveCapacity(capacity)
        batch.append(prefix)
        return batch
    }

    /// Whether a one-frame message is a batch (its first byte).
    public static func isBatch(_ frame: UnsafeRawBufferPointer) -> Bool { frame.first == prefix }

    /// The events of `frame`, each as ranges of it (topic, event), in order; nil when it is not a
    /// whole, well-formed batch of at least one event with non-empty topics: then none of it is to
    /// be forwarded.
    public static func split(_ frame: UnsafeRawBufferPointer) -> [(topic: Range<Int>, event: Range<Int>)]? {
        guard frame.first == prefix else { return nil }
        var events: [(topic: Range<Int>, event: Range<Int>)] = []
        var at = 1
        while at < frame.count {
            let topicLength = Int(frame[at])
            let topicStart = at + 1
            guard topicLength > 0, topicStart + topicLength + 4 <= frame.count else { return nil }
            let lengthAt = topicStart + topicLength
            let eventLength = (0..<4).reduce(0) { $0 << 8 | Int(frame[lengthAt + $1]) }
            let eventStart = lengthAt + 4
            guard eventLength <= frame.count - eventStart else { return nil }
            events.append((topicStart..<lengthAt, eventStart..<(eventStart + eventLength)))
            at = eventStart + eventLength
        }
        return events.isEmpty ? nil : events
    }

    /// The largest batch a publisher makes (well under the bus's `BusContract.maximumEventBytes`).
    public static let limit = 256 << 10

    /// The messages that carry `queued` to a bus that takes batches, in order: batches of at most
    /// `limit` bytes of the events some subscription covers, and an event too large for a batch in
    /// its two frames; each with how many events it accounts for. An event no subscription covers
    /// is accounted for and not sent (an XPUB drops those too): a message without frames.
    public static func messages(
        _ queued: [(topic: [UInt8], event: [UInt8])], subscriptions: SubscribedPrefixes, limit: Int = limit
    ) -> [(frames: [[UInt8]], events: UInt64)] {
        var messages: [(frames: [[UInt8]], events: UInt64)] = []
        var batch: [UInt8] = []
        var inBatch: UInt64 = 0
        var unheard: UInt64 = 0
        func flush() {
            if inBatch > 0 { messages.append(([batch], inBatch)) }
            (batch, inBatch) = ([], 0)
        }
        for (topic, event) in queued {
            guard subscriptions.covers(topic) else {
                unheard += 1
                continue
            }
            let size = Self.size(topic: topic, event: event)
            if size + 1 > limit {
                flush()
                messages.append(([topic, event], 1))
                continue
            }
            if batch.count + size > limit { flush() }
            if inBatch == 0 { batch = start(capacity: min(limit, 16 << 10)) }
            append(topic: topic, event: event, to: &batch)
            inBatch += 1
        }
        flush()
        if unheard > 0 { messages.append(([], unheard)) }
        return messages
    }
}
