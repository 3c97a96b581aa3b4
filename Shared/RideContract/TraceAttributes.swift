import Bus
import RideModels

// What the spans of ops and reactions say they are about (docs/tracing.md, "Spans").

extension Order: TraceAttributed {
    public var traceAttributes: [(key: String, value: String)] {
        [("ride.order_id", id), ("ride.order_status", status.rawValue)] + (tripID.map { [("ride.trip_id", $0)] } ?? [])
    }
}

extension OrderParams: TraceAttributed {
    public var traceAttributes: [(key: String, value: String)] { [("ride.order_id", id)] }
}

extension OrderStatusChanged: TraceAttributed {
    public var traceAttributes: [(key: String, value: String)] { order.traceAttributes }
}

extension Trip: TraceAttributed {
    public var traceAttributes: [(key: String, value: String)] {
        [("ride.trip_id", tripID)] + (metadata?["order_id"]?.stringValue.map { [("ride.order_id", $0)] } ?? [])
    }
}

extension TripEvent: TraceAttributed {
    public var traceAttributes: [(key: String, value: String)] {
        [("ride.trip_id", data.tripID)] + (data.tripMetadata?["order_id"]?.stringValue.map { [("ride.order_id", $0)] } ?? [])
    }
}

extension LifecycleEvent: TraceAttributed {
    public var traceAttributes: [(key: String, value: String)] {
        switch self {
        case .order(let change): change.traceAttributes
        case .arrival(let arrival): arrival.traceAttributes
        case .other: []
        }
    }
}
