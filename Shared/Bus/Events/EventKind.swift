/// One kind of event a service publishes: its CloudEvents `type`, the topic it goes out on, and
/// its payload's type. Declared once, in the RideContract module; publishers and subscribers
/// use these values, and the docs' topic table is derived from them.
public struct EventKind<Payload: Sendable>: Sendable {
    /// The CloudEvents `type`, e.g. `order.status`.
    public let type: String
    /// The topic, or its prefix when `key` says what follows (`order.status.` + the new status).
    public let topic: String
    /// What follows `topic` in each event's topic, or nil when the topic is exactly `topic`.
    public let key: String?
    /// The service that publishes it.
    public let source: String
    /// One line for the docs' topic table.
    public let summary: String

    /// The topic is the type, or the type and a dot when a key follows (`order.status.` + status).
    public init(type: String, key: String? = nil, source: String, _ summary: String) {
        self.type = type
        self.topic = key == nil ? type : type + "."
        self.key = key
        self.source = source
        self.summary = summary
    }

    /// The topic of one event, `topic` + `key` (`device.location.` + a device id), the key checked
    /// against the kind (`EventDescriptor.topic(key:)`); what a subscriber follows is `topic` + a key.
    public func topic(key: String?) throws(ServiceError) -> String { try descriptor.topic(key: key) }

    /// The kind without its payload type, for catalogs.
    public var descriptor: EventDescriptor {
        EventDescriptor(type: type, topic: topic, key: key, source: source, summary: summary, payloadType: Payload.self)
    }
}

/// An event kind as data.
public struct EventDescriptor: Sendable {
    public let type: String
    public let topic: String
    public let key: String?
    public let source: String
    public let summary: String
    public let payloadType: any Any.Type

    /// The topic of one event of this kind: `topic`, followed by `key` when the kind has one.
    /// A key given to a kind without one, or none to a kind that needs one, is the caller's bug,
    /// reported as an internal error before anything is stored.
    public func topic(key: String?) throws(ServiceError) -> String {
        switch (self.key, key) {
        case (nil, nil): return topic
        case (.some, .some(let key)): return topic + key
        case (.some(let named), nil):
            throw ServiceError(status: 500, code: "internal", message: "event \(type): its topic needs a key (\(named))")
        case (nil, .some):
            throw ServiceError(status: 500, code: "internal", message: "event \(type): its topic takes no key")
        }
    }
}

/// A value whose JSON is byte for byte a `Payload`'s, built a faster way (around a document
/// already encoded for the store, say); an event of kind `EventKind<Payload>` may carry it. Each
/// conformance has a test that the two encodings are equal.
public protocol EncodedPayload<Payload>: Encodable {
    associatedtype Payload
}
