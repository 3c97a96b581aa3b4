import Bus
import Foundation
import Testing
import Wire

@testable import RideCtlKit

@Suite struct EventLineFormatterTests {
    let event = CloudEvent<JSONValue>(
        id: "e", source: "orders", type: "order.status", time: RFC3339.parse("2026-11-21T09:30:00.123Z")!, sequence: 42,
        data: [
            "order": ["id": "o-1", "status": "ACCEPTED", "pickup": ["latitude": 47.8, "longitude": 35.1, "address": "Main St 1"]],
            "previous_status": "NEW",
        ])

    @Test func oneLineWithTimeTopicSourceAndTheTypesHeadline() {
        let line = EventLineFormatter(colored: false, width: 500).line(topic: "order.status.ACCEPTED", event: event)
        #expect(line == "09:30:00.123 order.status.ACCEPTED orders#42 order=o-1 status=ACCEPTED")
    }

    @Test func aTypeWithoutAHeadlineShowsItsWholeData() {
        var other = event
        other.type = "order.something_new"
        let line = EventLineFormatter(colored: false, width: 500).line(topic: "order.something_new", event: other)
        #expect(
            line == #"09:30:00.123 order.something_new orders#42 order.id=o-1 order.status=ACCEPTED order.pickup={…} previous_status=NEW"#)
    }

    @Test func fieldsChosenReplaceTheHeadline() throws {
        let fields = try TailCommand.parse(fields: "order.pickup.address,previous_status,order.nothing")
        let line = EventLineFormatter(colored: false, width: 500, fields: fields).line(topic: "order.status.ACCEPTED", event: event)
        #expect(line == #"09:30:00.123 order.status.ACCEPTED orders#42 order.pickup.address="Main St 1" previous_status=NEW"#)
        for bad in ["", "a,,b", "a..b", ".a", String(repeating: "x", count: 300)] {
            #expect(throws: (any Error).self, "\(bad)") { try TailCommand.parse(fields: bad) }
        }
    }

    @Test func aLocationAndATripReadAtAGlance() {
        let location = CloudEvent<JSONValue>(
            id: "e", source: "tracking/7", type: "device.location", time: event.time, sequence: 3,
            data: [
                "device_id": "7", "location": ["type": "Point", "coordinates": [24.9384, 60.1699]], "speed": 8.3, "accuracy": 5,
                "recorded_at": "x",
            ])
        #expect(
            EventLineFormatter(colored: false, width: 500).line(topic: "device.location.7", event: location).hasSuffix(
                "device=7 at=[24.9384,60.1699] speed=8.3m/s"))
        let eta = CloudEvent<JSONValue>(
            id: "e", source: "trips", type: "trip.eta", time: event.time, sequence: 4,
            data: [
                "data": [
                    "value": "eta", "trip_id": "t-1",
                    "estimate": ["arrive_at": "x", "route": ["distance": 569, "duration": 170, "remaining_duration": 162]],
                ]
            ])
        #expect(EventLineFormatter(colored: false, width: 500).line(topic: "trip.eta", event: eta).hasSuffix("trip=t-1 eta=162s left=569m"))
    }

    @Test func longLinesAreCutToTheTerminal() {
        let line = EventLineFormatter(colored: false, width: 60).line(topic: "order.status.ACCEPTED", event: event)
        #expect(line.count <= 60)
        #expect(line.hasSuffix("…"))
    }

    @Test func summariesOfScalarsArraysAndNesting() {
        #expect(EventLineFormatter.summary(["coordinates": [35.11459362, 47.835903]]) == "coordinates=[35.114594,47.835903]")
        #expect(
            EventLineFormatter.summary(["location": ["type": "Point", "coordinates": [35.1146, 47.8359]], "speed": 8])
                == "location=[35.1146,47.8359] speed=8")
        #expect(EventLineFormatter.summary(["items": [1, 2, 3, 4, 5]]) == "items=[5 items]")
        #expect(
            EventLineFormatter.summary(["text": "two words", "n": 3, "ok": true, "none": nil]) == #"n=3 none=null ok=true text="two words""#
        )
        #expect(EventLineFormatter.summary(["a": ["b": ["c": ["d": 1]]]]) == "a.b={…}")
        #expect(EventLineFormatter.summary(.string(String(repeating: "x", count: 60))).count == 40)
        #expect(EventLineFormatter.summary([:]) == "{}")
    }
}
