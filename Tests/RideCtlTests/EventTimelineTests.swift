import Bus
import Foundation
import Testing
import Wire

@testable import RideCtlKit

/// The timeline of a ride from the services' events, when there are no spans.
@Suite struct EventTimelineTests {
    static let start = RFC3339.parse("2026-11-21T09:30:00.000Z")!

    static func event(_ source: String, _ sequence: UInt64, _ type: String, at seconds: Double, _ data: JSONValue) -> CloudEvent<JSONValue>
    {
        CloudEvent(id: "e\(sequence)", source: source, type: type, time: start.addingTimeInterval(seconds), sequence: sequence, data: data)
    }

    static func status(
        _ sequence: UInt64, _ status: String, previous: String?, at seconds: Double, order: String = "o-1", trip: String? = nil
    ) -> CloudEvent<JSONValue> {
        var orderData: [String: JSONValue] = ["id": .string(order), "status": .string(status)]
        if let trip { orderData["trip_id"] = .string(trip) }
        return event(
            "orders", sequence, "order.status", at: seconds,
            ["order": .object(orderData), "previous_status": previous.map(JSONValue.string) ?? .null])
    }

    let orders = [
        status(1, "NEW", previous: nil, at: 0),
        event("orders", 2, "order.offered", at: 0.05, ["order_id": "o-1", "drivers": ["d-1"], "round": 1]),
        status(3, "NEW", previous: nil, at: 0.1, order: "o-2"),
        status(4, "ACCEPTED", previous: "NEW", at: 4.2),
        status(5, "PICKING_UP", previous: "ACCEPTED", at: 4.25, trip: "t-1"),
        event("orders", 6, "order.message", at: 5, ["message": ["order_id": "o-1", "text": "on my way"]]),
        status(7, "COMPLETED", previous: "DROPPING_OFF", at: 200, trip: "t-1"),
        event("orders", 8, "order.paid", at: 200.5, ["payment": ["order_id": "o-1", "amount": 12.5]]),
    ]
    /// Trips' events are shaped like HyperTrack's webhooks: the trip's fields under `data`.
    static func trip(_ sequence: UInt64, _ value: String, at seconds: Double, _ data: JSONValue) -> CloudEvent<JSONValue> {
        var fields = data.objectValue ?? [:]
        fields["value"] = .string(value)
        return event("trips", sequence, "trip.\(value)", at: seconds, ["type": "trip", "device_id": "dan-phone", "data": .object(fields)])
    }

    let trips = [
        trip(1, "created", at: 4.24, ["trip_id": "t-1"]),
        trip(2, "eta", at: 10, ["trip_id": "t-1"]),
        trip(3, "eta", at: 20, ["trip_id": "t-1"]),
        trip(4, "eta", at: 21, ["trip_id": "t-9"]),
        trip(5, "completed", at: 199, ["trip_id": "t-9", "trip_metadata": ["order_id": "o-1"]]),
    ]

    @Test func theOrdersEventsAndItsTripsInTimeOrderWithTheirGaps() throws {
        let timeline = try #require(EventTimelineBuilder.timeline(orderID: "o-1", orderEvents: orders, tripEvents: trips))
        #expect(timeline.origin == .events)
        #expect(
            timeline.steps.map(\.label) == [
                "NEW", "order.offered", "ACCEPTED", "trip.created", "PICKING_UP", "order.message", "trip.eta", "trip.completed",
                "COMPLETED", "order.paid",
            ])
        #expect(
            timeline.steps.map(\.service) == [
                "orders", "orders", "orders", "trips", "orders", "orders", "trips", "trips", "orders", "orders",
            ])
        #expect(timeline.steps.first { $0.label == "trip.eta" }?.count == 2, "t-9's ETA is another trip's")
        #expect(timeline.steps.map(\.cause)[2] == "orders#4 after NEW")
        #expect(
            timeline.steps.map { $0.sincePrevious.map { ($0 * 1000).rounded() / 1000 } } == [
                nil, 0.05, 4.15, 0.04, 0.01, 0.75, 5, 189, 1, 0.5,
            ])
        #expect(timeline.steps.allSatisfy { $0.hops == nil })
    }

    @Test func theTableShowsSourcesAndGaps() throws {
        let text = TimelineRenderer.text(
            try #require(EventTimelineBuilder.timeline(orderID: "o-1", orderEvents: orders, tripEvents: trips)), origin: "the events")
        let lines = text.split(separator: "\n").map(String.init)
        #expect(lines[0] == "order o-1: 10 events from the events")
        #expect(lines[1] == "TIME (UTC)    GAP       STATUS / EVENT    PROCESS   SOURCE#SEQUENCE")
        #expect(lines[4] == "09:30:04.200  +4.15s    ACCEPTED          orders    orders#4 after NEW")
        #expect(lines[8] == "09:30:10.000  +5.00s    trip.eta ×2       trips     trips#2")
        #expect(lines[9] == "09:33:19.000  +3m09s    trip.completed    trips     trips#5")
        #expect(text.contains("(no spans: times and gaps from the events; `ridectl up --traces` records each hop)"))
    }

    @Test func anOrderWithoutEventsHasNoTimeline() {
        #expect(EventTimelineBuilder.timeline(orderID: "o-404", orderEvents: orders, tripEvents: trips) == nil)
        #expect(
            EventTimelineBuilder.timeline(orderID: "o-1", orderEvents: [], tripEvents: trips) == nil, "trips alone do not make an order")
    }
}
