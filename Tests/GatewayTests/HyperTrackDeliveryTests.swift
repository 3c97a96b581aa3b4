import Foundation
import RideModels
import Testing
import Wire

@testable import GatewayService

/// A HyperTrack delivery read: its signature, its events, and each way it is refused whole.
@Suite struct HyperTrackDeliveryTests {
    static let now = Date(timeIntervalSince1970: 1_790_000_000)
    static let created = RFC3339.format(now.addingTimeInterval(-30))

    static func location(_ device: String, _ seconds: Int, latitude: Double = 60.17, longitude: Double = 24.94) -> String {
        #"{"type":"location","device_id":"\#(device)","created_at":"\#(created)","recorded_at":"\#(RFC3339.format(now.addingTimeInterval(Double(seconds))))","data":{"geometry":{"type":"Point","coordinates":[\#(longitude),\#(latitude)]},"speed":3.5,"accuracy":8,"bearing":360}}"#
    }

    static func read(_ events: [String]) throws(HyperTrackWebhookProblem) -> HyperTrackDelivery {
        try HyperTrackDelivery(body: Array("[\(events.joined(separator: ","))]".utf8), now: now)
    }

    @Test func theSignatureIsTheHexHMACOfTheBody() {
        let body = Array(#"[{"type":"battery"}]"#.utf8)
        let signature = HyperTrackDelivery.signature(body: body, secret: "s3cret")
        #expect(signature.count == 64)
        #expect(HyperTrackDelivery.signatureIsValid(signature, body: body, secret: "s3cret"))
        #expect(HyperTrackDelivery.signatureIsValid("sha256=" + signature.uppercased(), body: body, secret: "s3cret"))
        #expect(!HyperTrackDelivery.signatureIsValid(signature, body: body + [0x20], secret: "s3cret"))
        #expect(!HyperTrackDelivery.signatureIsValid(signature, body: body, secret: "other"))
        for bad in ["", "zz", String(signature.dropLast()), String(repeating: "g", count: 64)] {
            #expect(!HyperTrackDelivery.signatureIsValid(bad, body: body, secret: "s3cret"), "\(bad)")
        }
    }

    @Test func locationsAreEachDevicesFixesInTimeOrderAndTheRestIsSorted() throws {
        let arrival =
            #"{"type":"trip","device_id":"d1","created_at":"\#(Self.created)","data":{"value":"destination_arrival","trip_id":"t","trip_metadata":{"order_id":"o-1"}}}"#
        let foreign =
            #"{"type":"trip","device_id":"d1","created_at":"\#(Self.created)","data":{"value":"destination_arrival","trip_id":"t"}}"#
        let completed = #"{"type":"trip","device_id":"d1","created_at":"\#(Self.created)","data":{"value":"completed","trip_id":"t"}}"#
        let delivery = try Self.read([Self.location("d1", 5), Self.location("d2", 1), Self.location("d1", 2), arrival, foreign, completed])
        #expect(delivery.count == 6)
        #expect(delivery.locations["d1"]?.map(\.recordedAt) == [Self.now.addingTimeInterval(2), Self.now.addingTimeInterval(5)])
        #expect(delivery.locations["d1"]?.first?.bearing == 0 && delivery.locations["d1"]?.first?.speed == 3.5, "360° is north")
        #expect(delivery.locationEvents["d1"] == [0, 2] && delivery.locationEvents["d2"] == [1])
        #expect(delivery.arrivals == [.init(index: 3, deviceID: "d1", orderID: "o-1")])
        #expect(delivery.ignored.map(\.index) == [4, 5] && delivery.ignored[0].reason.contains("trip_metadata.order_id"))
    }

    @Test func aDeliveryIsRefusedWholeNamingWhatIsWrong() {
        let cases: [([String], HyperTrackWebhookProblem)] = [
            ([], .malformed("a delivery holds 1 to 1000 events, not 0")),
            ([#"{"device_id":"d1"}"#], .malformed("events[0].type: required, a string")),
            ([#"{"type":"location"}"#], .malformed("events[0].created_at: required, an RFC 3339 time")),
            (
                [Self.location("d1", 0, latitude: 91)],
                .malformed("events[0].data.geometry.coordinates: [longitude, latitude] within ±180 and ±90")
            ),
            ([Self.location("has space", 0)], .malformed("events[0].device_id: required, \(TextPatterns.deviceIDMeaning)")),
            (
                [Self.location("d1", 0).replacingOccurrences(of: #""speed":3.5"#, with: #""speed":-1"#)],
                .malformed("events[0].data.speed: a number from 0.0 to 200.0")
            ),
        ]
        for (events, problem) in cases {
            #expect(throws: problem, "\(events)") { try Self.read(events) }
        }
        let old = Self.location("d1", 0).replacingOccurrences(of: Self.created, with: RFC3339.format(Self.now.addingTimeInterval(-16 * 60)))
        #expect(throws: HyperTrackWebhookProblem.self) { try Self.read([Self.location("d1", 1), old]) }
        let ahead = Self.location("d1", 0).replacingOccurrences(of: Self.created, with: RFC3339.format(Self.now.addingTimeInterval(600)))
        #expect(throws: HyperTrackWebhookProblem.self) { try Self.read([ahead]) }
        #expect(throws: HyperTrackWebhookProblem.malformed("the body is not a JSON array of events")) {
            try HyperTrackDelivery(body: Array("{}".utf8), now: Self.now)
        }
    }
}
