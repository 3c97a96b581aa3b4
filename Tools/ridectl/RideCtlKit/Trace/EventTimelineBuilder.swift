import Bus
import Foundation
import Wire

/// Builds a ride's timeline from the services' event history (pure: events in, timeline out), for
/// when there are no spans: each `order.*` event of the order and each `trip.*` event of its trips,
/// with its time, status, source and the gap since the one before.
public enum EventTimelineBuilder {
    /// The timeline of `orderID`, or nil when no `order.*` event is about it.
    public static func timeline(orderID: String, orderEvents: [CloudEvent<JSONValue>], tripEvents: [CloudEvent<JSONValue>]) -> RideTimeline?
    {
        let mine = orderEvents.filter { $0.type.hasPrefix("order.") && concerns($0.data, orderID: orderID) }
        guard !mine.isEmpty else { return nil }
        let trips = tripIDs(of: mine)
        let tripSteps = tripEvents.filter { event in
            guard event.type.hasPrefix("trip.") else { return false }
            // HyperTrack's webhook shape: the trip's fields are under `data`.
            let trip = event.data["data"] ?? event.data
            if let id = trip["trip_id"]?.stringValue, trips.contains(id) { return true }
            return trip["trip_metadata"]?["order_id"]?.stringValue == orderID
        }
        let steps = (mine + tripSteps).sorted { ($0.time, $0.source, $0.sequence) < ($1.time, $1.source, $1.sequence) }.map(step(for:))
        return RideTimeline(orderID: orderID, origin: .events, steps: TimelineSteps.collapsed(steps))
    }

    /// The trip ids the order's events name (`data.order.trip_id`).
    public static func tripIDs(of orderEvents: [CloudEvent<JSONValue>]) -> Set<String> {
        Set(orderEvents.compactMap { $0.data["order"]?["trip_id"]?.stringValue })
    }

    /// Whether an event's data is about the order: `order.id` (statuses), `order_id` (offers,
    /// ratings, …) or `order_id` one level down (`message.order_id`, `payment.order_id`).
    public static func concerns(_ data: JSONValue, orderID: String) -> Bool {
        if data["order"]?["id"]?.stringValue == orderID || data["order_id"]?.stringValue == orderID { return true }
        return data.objectValue?.values.contains { $0["order_id"]?.stringValue == orderID } ?? false
    }

    static func step(for event: CloudEvent<JSONValue>) -> TimelineStep {
        let status = event.type == "order.status" ? event.data["order"]?["status"]?.stringValue : nil
        var cause = "\(event.source)#\(event.sequence)"
        if let previous = event.data["previous_status"]?.stringValue { cause += " after \(previous)" }
        return TimelineStep(
            time: event.time, label: status ?? event.type, status: status, eventType: event.type, service: event.source, cause: cause)
    }
}
