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

    @Test func oneLineWithTimeTopicSourceAndSummary() {
        let line = EventLineFormatter(colored: false, width: 500).line(topic: "order.status.ACCEPTED", event: event)
        #expect(line == #"09:30:00.123 order.status.ACCEPTED orders#42 order.id=o-1 order.status=ACCEPTED order.pickup={…} previous_status=NEW"#)
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
        #expect(EventLineFormatter.summary(["text": "two words", "n": 3, "ok": true, "none": nil]) == #"n=3 none=null ok=true text="two words""#)
        #expect(EventLineFormatter.summary(["a": ["b": ["c": ["d": 1]]]]) == "a.b={…}")
        #expect(EventLineFormatter.summary(.string(String(repeating: "x", count: 60))).count == 40)
        #expect(EventLineFormatter.summary([:]) == "{}")
    }
}
