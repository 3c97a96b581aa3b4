import Foundation
import Wire

/// One exported span as `ridectl` keeps it: a line of `spans.jsonl`, made from OTLP JSON by
/// `OTLPTraceDecoder` and read back by `ridectl trace`. Ids are lowercase hex; times are Unix
/// nanoseconds; attribute values are kept as text (`ride.order_id`, `ride.order_status`, …).
@WireKeys
public struct Span: Codable, Sendable, Equatable {
    /// OTLP's span kinds (`SPAN_KIND_…`).
    public enum Kind: String, Codable, Sendable {
        case unspecified, `internal`, server, client, producer, consumer
    }

    public var traceID: String
    public var spanID: String
    public var parentSpanID: String?
    public var name: String
    public var kind: Kind
    /// The resource's `service.name`: the program, e.g. `ride-orders`.
    public var service: String
    /// The resource's `service.instance.id`, when it has one.
    public var instance: String?
    @WireKey("start_ns") public var start: UInt64
    @WireKey("end_ns") public var end: UInt64
    public var attributes: [String: String]
    /// `error` when the span's status says it failed (with its message after a colon), else nil.
    public var status: String?

    public init(
        traceID: String, spanID: String, parentSpanID: String? = nil, name: String, kind: Kind, service: String, instance: String? = nil,
        start: UInt64, end: UInt64, attributes: [String: String] = [:], status: String? = nil
    ) {
        self.traceID = traceID
        self.spanID = spanID
        self.parentSpanID = parentSpanID
        self.name = name
        self.kind = kind
        self.service = service
        self.instance = instance
        self.start = start
        self.end = end
        self.attributes = attributes
        self.status = status
    }

    /// The attribute names the platform's spans use (the tracing conventions of issue 24).
    public enum Attribute {
        public static let orderID = "ride.order_id"
        public static let orderStatus = "ride.order_status"
        public static let tripID = "ride.trip_id"
        public static let eventID = "ride.event_id"
        public static let eventType = "ride.event_type"
        /// OpenTelemetry's messaging convention: the topic a `publish` span's event went to.
        public static let destination = "messaging.destination.name"
    }

    public var duration: UInt64 { end >= start ? end - start : 0 }

    /// An op handler (`op orders.accept`) or a reactor (`react orders order.status`): where a
    /// process does the work of a step.
    public var isHandler: Bool { name.hasPrefix("op ") || name.hasPrefix("react ") }
    /// A reactor's span: its parent is the event's `publish` span, in another process.
    public var isReaction: Bool { name.hasPrefix("react ") || (kind == .consumer && !name.hasPrefix("op ")) }
    /// An MDP client's request (`call orders.accept`).
    public var isCall: Bool { name.hasPrefix("call ") || (kind == .client && attributes["rpc.system"] == "mdp") }
    /// The outbox relay sending an event (`publish order.status`).
    public var isPublish: Bool { name.hasPrefix("publish ") || kind == .producer }
    public var isCommit: Bool { name == "db.commit" }

    /// The event type a `publish` or `react` span is about: its `ride.event_type`, else the last
    /// word of its name.
    public var eventType: String? {
        if let type = attributes[Attribute.eventType] { return type }
        guard isPublish || isReaction, let last = name.split(separator: " ").last, name.contains(" ") else { return nil }
        return String(last)
    }
}
