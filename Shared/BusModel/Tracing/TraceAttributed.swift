import Tracing

/// A value that says what a span is about: an op's params or reply, an event's data — the
/// order, its status, the trip (`ride.order_id`, `ride.order_status`, `ride.trip_id`). The
/// contract's types conform (RideContract); the op router and the reactor set them on their
/// span, and only when there is one (tracing on).
public protocol TraceAttributed {
    /// Pairs of attribute name and value; the values known.
    var traceAttributes: [(key: String, value: String)] { get }
}

extension Span {
    /// Sets the attributes of `value` when it has any.
    public func describe(_ value: Any) {
        guard let attributed = value as? any TraceAttributed else { return }
        for (key, text) in attributed.traceAttributes { attributes[key] = text }
    }
}
