import Foundation
import RideContract

/// Builds a ride's timeline from exported spans (pure: spans in, timeline out).
///
/// The ride's traces are those with a span whose `ride.order_id` is the order, and those of its
/// trips (`ride.trip_id` seen in them). A step is an `order.*` or `trip.*` event's `publish` span
/// (the outbox relay sending it); without those, a `db.commit` or `op` span carrying
/// `ride.order_status`. Its handler is the nearest `op`/`react` span above it, and its hops are
/// measured between the spans around that handler (see `Hops`).
public struct SpanTimelineBuilder: Sendable {
    let spans: [Span]
    /// Spans by trace and span id: a span id is only unique within its trace.
    let byID: [String: Span]
    let children: [String: [Span]]

    public init(spans: [Span]) {
        self.spans = spans
        var byID: [String: Span] = [:]
        var children: [String: [Span]] = [:]
        for span in spans {
            if byID[span.traceID + span.spanID] == nil { byID[span.traceID + span.spanID] = span }
            if let parent = span.parentSpanID { children[span.traceID + parent, default: []].append(span) }
        }
        self.byID = byID
        self.children = children
    }

    /// The timeline of `orderID`, or nil when no span mentions the order.
    public func timeline(orderID: String) -> RideTimeline? {
        var traces = Set(spans.filter { $0.attributes[Span.Attribute.orderID] == orderID }.map(\.traceID))
        guard !traces.isEmpty else { return nil }
        let tripIDs = Set(spans.filter { traces.contains($0.traceID) }.compactMap { $0.attributes[Span.Attribute.tripID] })
        traces.formUnion(spans.filter { $0.attributes[Span.Attribute.tripID].map(tripIDs.contains) == true }.map(\.traceID))
        let ride = spans.filter { traces.contains($0.traceID) }
        func concerns(_ span: Span) -> Bool {
            for candidate in [span, handler(of: span)].compactMap({ $0 }) {
                if candidate.attributes[Span.Attribute.orderID] == orderID { return true }
                if let trip = candidate.attributes[Span.Attribute.tripID], tripIDs.contains(trip) { return true }
            }
            return false
        }
        var markers = ride.filter { span in
            guard span.isPublish, let type = span.eventType, type.hasPrefix("order.") || type.hasPrefix("trip.") else { return false }
            return concerns(span)
        }
        if markers.isEmpty { markers = ride.filter { $0.isCommit && $0.attributes[Span.Attribute.orderStatus] != nil && concerns($0) } }
        if markers.isEmpty {
            markers = ride.filter { $0.name.hasPrefix("op ") && $0.attributes[Span.Attribute.orderStatus] != nil && concerns($0) }
        }
        let steps = markers.map(step(for:)).sorted { ($0.time, $0.label) < ($1.time, $1.label) }
        return RideTimeline(orderID: orderID, origin: .spans, traces: traces.sorted(), steps: TimelineSteps.collapsed(steps))
    }

    /// The step a marker span stands for.
    func step(for marker: Span) -> TimelineStep {
        let handler = handler(of: marker)
        let type = marker.isPublish ? marker.eventType : nil
        // An order.status event's status is the last part of its topic (`order.status.PICKING_UP`);
        // a reaction's own `ride.order_status` is the status it reacted to, not the one it made.
        let topicStatus = marker.attributes[Span.Attribute.destination].flatMap { topic in
            topic.hasPrefix(Events.orderStatus.topic) ? String(topic.dropFirst(Events.orderStatus.topic.count)) : nil
        }
        let opStatus = handler?.name.hasPrefix("op ") == true ? handler?.attributes[Span.Attribute.orderStatus] : nil
        let status = marker.attributes[Span.Attribute.orderStatus] ?? (type == Events.orderStatus.type ? topicStatus ?? opStatus : nil)
        let worker = handler ?? marker
        // When it happened: its commit (the last one before its event went out), else the event's publication.
        let limit = marker.isPublish ? marker.start : marker.end
        let commits = marker.isCommit ? [marker] : handler.map { descendants(of: $0).filter(\.isCommit) } ?? []
        let time = commits.map(\.end).filter { $0 <= limit }.max() ?? limit
        return TimelineStep(
            time: Date(timeIntervalSince1970: Double(time) / 1e9), label: status ?? type ?? worker.name, status: status, eventType: type,
            service: worker.service,
            cause: cause(of: worker),
            traceID: marker.traceID, hops: handler.map { hops(handler: $0, marker: marker) })
    }

    func parent(of span: Span) -> Span? { span.parentSpanID.flatMap { byID[span.traceID + $0] } }

    /// The nearest `op`/`react` span at or above `span`; failing that (a relay that starts a trace
    /// of its own), the last one of the same trace and process that began before it.
    func handler(of span: Span) -> Span? {
        var current: Span? = span
        var seen = 0
        while let candidate = current, seen < 64 {
            if candidate.isHandler { return candidate }
            current = parent(of: candidate)
            seen += 1
        }
        return spans.filter { $0.isHandler && $0.traceID == span.traceID && $0.service == span.service && $0.start <= span.start }.max {
            $0.start < $1.start
        }
    }

    /// `op orders.accept ← ride-gateway POST /v1/…` or `react orders order.status ← ride-orders`.
    func cause(of handler: Span) -> String {
        guard let parent = parent(of: handler) else { return handler.name }
        var origin = parent.service
        // A call's parent says what the caller was doing: a gateway request, another handler.
        if parent.isCall, let caller = self.parent(of: parent) {
            origin += " " + caller.name
        } else if !handler.isHandler, !parent.isPublish {
            origin += " " + parent.name  // a step without a handler: what published it (`trip.watch`)
        }
        return "\(handler.name) ← \(origin)"
    }

    func hops(handler: Span, marker: Span) -> Hops {
        let parent = parent(of: handler)
        var hops = Hops()
        var origin = handler.start
        if let parent, handler.isReaction, parent.isPublish {
            hops.bus = milliseconds(from: parent.start, to: handler.start)
            origin = parent.start
        } else if let parent, parent.isCall {
            hops.brokerQueue = milliseconds(from: parent.start, to: handler.start)
            origin = parent.start
        }
        let direct = children[handler.traceID + handler.spanID] ?? []
        let childTime = direct.reduce(UInt64(0)) { total, child in
            let start = max(child.start, handler.start)
            let end = min(child.end, handler.end)
            return total + (end > start ? end - start : 0)
        }
        hops.handler = Double(handler.duration - min(childTime, handler.duration)) / 1e6
        let commits = descendants(of: handler).filter(\.isCommit)
        if !commits.isEmpty { hops.databaseCommit = Double(commits.reduce(UInt64(0)) { $0 + $1.duration }) / 1e6 }
        if marker.isPublish {
            let committed = commits.filter { $0.end <= marker.start }.map(\.end).max()
            if let committed { hops.outbox = milliseconds(from: committed, to: marker.start) }
            hops.total = milliseconds(from: origin, to: marker.start)
        } else {
            hops.total = milliseconds(from: origin, to: handler.end)
        }
        return hops
    }

    /// The spans under `span` in its own process, short of other handlers: a call to another
    /// process, or a reaction to an event it published, is a step of its own.
    func descendants(of span: Span) -> [Span] {
        var result: [Span] = []
        var queue = children[span.traceID + span.spanID] ?? []
        while let next = queue.popLast(), result.count < 10_000 {
            guard next.service == span.service, !next.isHandler else { continue }
            result.append(next)
            queue += children[next.traceID + next.spanID] ?? []
        }
        return result
    }

    func milliseconds(from start: UInt64, to end: UInt64) -> Double {
        end >= start ? Double(end - start) / 1e6 : -Double(start - end) / 1e6
    }
}

/// What both builders do to their steps once sorted.
enum TimelineSteps {
    /// Consecutive steps of one event type that is not a status change (`trip.eta` while driving)
    /// become one with a count; then each step gets the time since the one before.
    static func collapsed(_ steps: [TimelineStep]) -> [TimelineStep] {
        var result: [TimelineStep] = []
        for step in steps {
            if var last = result.last, last.status == nil, step.status == nil, last.label == step.label {
                last.count += step.count
                result[result.count - 1] = last
            } else {
                result.append(step)
            }
        }
        for index in result.indices.dropFirst() {
            result[index].sincePrevious = result[index].time.timeIntervalSince(result[index - 1].time)
        }
        return result
    }
}
