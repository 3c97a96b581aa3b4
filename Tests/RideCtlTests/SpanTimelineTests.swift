import Foundation
import Testing
import Wire

@testable import RideCtlKit

/// The timeline of a ride from its spans: which steps, their times and their hops.
@Suite struct SpanTimelineTests {
    let timeline = SpanTimelineBuilder(spans: RideTraceFixture.spans).timeline(orderID: RideTraceFixture.orderID)

    @Test func theRideIsItsStatusesAndTripEventsInOrderFromItsThreeTraces() throws {
        let timeline = try #require(timeline)
        #expect(timeline.origin == .spans)
        #expect(
            timeline.traces == [RideTraceFixture.booking, RideTraceFixture.acceptance, RideTraceFixture.watch],
            "the other order's trace is not the ride's")
        #expect(timeline.steps.map(\.label) == ["NEW", "order.offered", "ACCEPTED", "trip.created", "PICKING_UP", "trip.eta"])
        #expect(timeline.steps.map(\.service) == ["ride-orders", "ride-orders", "ride-orders", "ride-trips", "ride-orders", "ride-trips"])
        #expect(timeline.steps.map(\.count) == [1, 1, 1, 1, 1, 2], "the two ETAs are one line")
        #expect(
            timeline.steps.map { RFC3339.format($0.time) } == [
                "2025-11-25T10:00:00.014Z", "2025-11-25T10:00:00.035Z", "2025-11-25T10:00:02.058Z", "2025-11-25T10:00:02.086Z",
                "2025-11-25T10:00:02.094Z",
                "2025-11-25T10:00:05.001Z",
            ])
        #expect(timeline.steps.first?.sincePrevious == nil)
        #expect(abs((timeline.steps[2].sincePrevious ?? 0) - 2.023) < 0.000_01)
    }

    @Test func eachStepSaysWhatCausedIt() throws {
        let causes = try #require(timeline).steps.map(\.cause)
        #expect(
            causes == [
                "op orders.create ← ride-gateway POST /v1/orders",
                "react orders order.status ← ride-orders",
                "op orders.accept ← ride-gateway POST /v1/orders/{id}/accept",
                "op trips.create ← ride-orders react orders order.status",
                "react orders order.status ← ride-orders",
                "publish trip.eta ← ride-trips trip.watch",
            ])
    }

    @Test func theHopsAreMeasuredBetweenTheSpansAroundEachHandler() throws {
        let hops = try #require(timeline).steps.map(\.hops)
        #expect(
            hops[0] == Hops(brokerQueue: 2, handler: 8, databaseCommit: 4, outbox: 2, total: 15),
            "NEW: queued 3−1, 12 ms of handler less a 4 ms commit")
        #expect(
            hops[1] == Hops(bus: 5, handler: 7, databaseCommit: 4, outbox: 10, total: 29), "offered: NEW published at 16, reacted to at 21")
        #expect(hops[2] == Hops(brokerQueue: 50, handler: 6, databaseCommit: 3, outbox: 4, total: 61), "ACCEPTED waited 50 ms for a worker")
        #expect(hops[3] == Hops(brokerQueue: 1, handler: 10, databaseCommit: 6, outbox: 3, total: 18), "trips' commit, not orders'")
        #expect(
            hops[4] == Hops(bus: 8, handler: 7.8, databaseCommit: 3, outbox: 2, total: 34),
            "the reactor's time less the call to trips, its commit and the publication")
        #expect(hops[5] == nil, "an ETA has no handler")
    }

    @Test func theTablePrintsEachStepsHopsAndTheSlowest() throws {
        let text = TimelineRenderer.text(try #require(timeline), origin: "spans.jsonl")
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(lines[0] == "order o-42: 6 steps from spans.jsonl (3 traces)")
        #expect(
            lines[1]
                == "TIME (UTC)    GAP       STATUS / EVENT    PROCESS            BUS    QUEUE  HANDLER   COMMIT   OUTBOX    TOTAL  CAUSE")
        #expect(
            lines[2]
                == "10:00:00.014            NEW               ride-orders          -   2.00ms   8.00ms   4.00ms   2.00ms   15.0ms  op orders.create ← ride-gateway POST /v1/orders"
        )
        #expect(
            lines[4]
                == "10:00:02.058  +2.02s    ACCEPTED          ride-orders          -   50.0ms   6.00ms   3.00ms   4.00ms   61.0ms  op orders.accept ← ride-gateway POST /v1/orders/{id}/accept"
        )
        #expect(
            lines[6]
                == "10:00:02.094  +8ms      PICKING_UP        ride-orders     8.00ms        -   7.80ms   3.00ms   2.00ms   34.0ms  react orders order.status ← ride-orders"
        )
        #expect(
            lines[7]
                == "10:00:05.001  +2.91s    trip.eta ×2       ride-trips           -        -        -        -        -        -  publish trip.eta ← ride-trips trip.watch"
        )
        #expect(
            text.hasSuffix(
                "\nslowest hop: broker queue 50.0ms at ACCEPTED in ride-orders (op orders.accept ← ride-gateway POST /v1/orders/{id}/accept)\n"
            ))
    }

    @Test func theJSONHasEveryStepAndHop() throws {
        let json = try JSONCoding.decode(JSONValue.self, from: Array(TimelineRenderer.json(try #require(timeline)).utf8))
        #expect(json["order_id"] == "o-42")
        #expect(json["origin"] == "spans")
        #expect(json["steps"]?[2]?["status"] == "ACCEPTED")
        #expect(json["steps"]?[2]?["hops"]?["broker_queue_ms"] == 50)
        #expect(json["steps"]?[4]?["hops"]?["bus_ms"] == 8)
        #expect(json["steps"]?[5]?["count"] == 2)
    }

    @Test func anOrderNoSpanNamesHasNoTimeline() {
        #expect(SpanTimelineBuilder(spans: RideTraceFixture.spans).timeline(orderID: "o-unknown") == nil)
        #expect(SpanTimelineBuilder(spans: []).timeline(orderID: RideTraceFixture.orderID) == nil)
    }

    @Test func withoutPublishSpansTheCommitsCarryingAStatusAreTheSteps() throws {
        let spans = RideTraceFixture.spans.filter { !$0.isPublish }.map { span -> Span in
            var span = span
            if span.isCommit, span.traceID == RideTraceFixture.booking, span.spanID == String(format: "%016x", 4) {
                span.attributes = RideTraceFixture.status("NEW")
            }
            return span
        }
        let timeline = try #require(SpanTimelineBuilder(spans: spans).timeline(orderID: RideTraceFixture.orderID))
        #expect(timeline.steps.map(\.label) == ["NEW"])
        #expect(timeline.steps.first?.hops?.brokerQueue == 2)
        #expect(timeline.steps.first?.hops?.outbox == nil, "no publication to measure to")
    }
}
