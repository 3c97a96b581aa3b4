import Foundation
import Testing
import Wire

@testable import Bus

struct OrderData: Codable, Equatable, Sendable {
    var orderID: String
    var status: String
    enum CodingKeys: String, CodingKey {
        case orderID = "order_id"
        case status
    }
}

@Suite struct CloudEventTests {
    let sample =
        #"{"specversion":"1.0","id":"e1","source":"orders","type":"order.status","time":"2026-11-21T09:30:00.123Z","sequence":"42","datacontenttype":"application/json","data":{"order_id":"o1","status":"NEW"}}"#

    @Test func roundTripThroughEncoder() throws {
        let event = CloudEvent(
            id: "e1", source: "orders", type: "order.status", time: RFC3339.parse("2026-11-21T09:30:00.123Z")!,
            sequence: 42, data: OrderData(orderID: "o1", status: "NEW"))
        let decoded = try CloudEvent<OrderData>.decode(event.encoded())
        #expect(decoded == event)
    }

    @Test func envelopeWriterMatchesDecoder() throws {
        let data = try JSONCoding.encode(OrderData(orderID: "o\"1\n", status: "NEW"))
        let time = RFC3339.parse("2026-01-02T03:04:05.678Z")!
        let bytes = EnvelopeWriter.write(id: "id\\x", source: "orders", type: "order.status", time: time, sequence: 7, data: data)
        let event = try CloudEvent<OrderData>.decode(bytes)
        #expect(event.id == "id\\x")
        #expect(event.sequence == 7)
        #expect(event.time == time)
        #expect(event.data == OrderData(orderID: "o\"1\n", status: "NEW"))
    }

    /// The one-pass reader gives a repeated envelope member to JSONDecoder (it does not guess which
    /// repeat counts), and skips any other member, repeated or not, as `init(from:)` does.
    @Test func theFastReaderGivesUpOnARepeatedMemberAndSkipsOthers() throws {
        #expect(CloudEvent<JSONValue>.readWhole(Array(sample.utf8))?.id == "e1")
        for member in [#""id":"e2""#, #""type":"x.y""#, #""data":{}"#, #""specversion":"1.0""#] {
            let repeated = sample.replacingOccurrences(of: #""source""#, with: member + #","source""#)
            #expect(CloudEvent<JSONValue>.readWhole(Array(repeated.utf8)) == nil, "\(member) twice")
        }
        let other = sample.replacingOccurrences(of: #""source""#, with: #""x":1,"x":[2],"source""#)
        #expect(CloudEvent<JSONValue>.readWhole(Array(other.utf8))?.sequence == 42)
        let noVersion = sample.replacingOccurrences(of: #""specversion":"1.0","#, with: "")
        #expect(CloudEvent<JSONValue>.readWhole(Array(noVersion.utf8)) == nil)
    }

    /// A subscriber finds its payload's one-pass reader once: there for a payload with one, giving
    /// what `decode` gives; absent for a plain `Codable` payload, which `decode` reads alone.
    @Test func theOneParseReaderIsFoundOnceAndReadsAsDecodeDoes() throws {
        let reader = try #require(CloudEvent<JSONValue>.oneParseReader)
        #expect(try reader(Array(sample.utf8)) == CloudEvent<JSONValue>.decode(Array(sample.utf8)))
        #expect(reader(Array(#"{"specversion":"1.0"}"#.utf8)) == nil)
        #expect(CloudEvent<OrderData>.oneParseReader == nil)
    }

    @Test func decodesTheDesignExample() throws {
        let event = try CloudEvent<JSONValue>.decode(Array(sample.utf8))
        #expect(event.source == "orders")
        #expect(event.sequence == 42)
        #expect(event.data["status"] == "NEW")
    }

    @Test(arguments: [
        (#"{"specversion":"0.3","id":"e","source":"s","type":"t","time":"2026-11-21T09:30:00Z","sequence":"1","data":{}}"#, "specversion"),
        (#"{"specversion":"1.0","source":"s","type":"t","time":"2026-11-21T09:30:00Z","sequence":"1","data":{}}"#, "id"),
        (#"{"specversion":"1.0","id":"","source":"s","type":"t","time":"2026-11-21T09:30:00Z","sequence":"1","data":{}}"#, "id"),
        (#"{"specversion":"1.0","id":"e","source":5,"type":"t","time":"2026-11-21T09:30:00Z","sequence":"1","data":{}}"#, "source"),
        (#"{"specversion":"1.0","id":"e","source":"s","time":"2026-11-21T09:30:00Z","sequence":"1","data":{}}"#, "type"),
        (#"{"specversion":"1.0","id":"e","source":"s","type":"t","time":"yesterday","sequence":"1","data":{}}"#, "time"),
        (#"{"specversion":"1.0","id":"e","source":"s","type":"t","time":"2026-11-21T09:30:00Z","sequence":12,"data":{}}"#, "sequence"),
        (#"{"specversion":"1.0","id":"e","source":"s","type":"t","time":"2026-11-21T09:30:00Z","sequence":"-1","data":{}}"#, "sequence"),
        (
            #"{"specversion":"1.0","id":"e","source":"s","type":"t","time":"2026-11-21T09:30:00Z","sequence":"99999999999999999999999","data":{}}"#,
            "sequence"
        ),
        (
            #"{"specversion":"1.0","id":"e","source":"s","type":"t","time":"2026-11-21T09:30:00Z","sequence":"1","datacontenttype":"text/xml","data":{}}"#,
            "datacontenttype"
        ),
        (#"{"specversion":"1.0","id":"e","source":"s","type":"t","time":"2026-11-21T09:30:00Z","sequence":"1"}"#, "data"),
        (
            #"{"specversion":"1.0","id":"e","source":"s","type":"t","time":"2026-11-21T09:30:00Z","sequence":"1","data":{"order_id":3,"status":"NEW"}}"#,
            "data"
        ),
        (#"[1,2,3]"#, "(event)"),
        (#"{"specversion":"1.0","#, "(event)"),
        ("\u{FF}\u{FE}garbage", "(event)"),
    ])
    func rejectsMalformedEnvelopes(json: String, field: String) {
        #expect(throws: EnvelopeError.self) { try CloudEvent<OrderData>.decode(Array(json.utf8)) }
        do {
            _ = try CloudEvent<OrderData>.decode(Array(json.utf8))
        } catch {
            #expect(error.field == field, "\(error)")
        }
    }

    @Test func dataErrorsNameTheField() {
        let json =
            #"{"specversion":"1.0","id":"e","source":"s","type":"t","time":"2026-11-21T09:30:00Z","sequence":"1","data":{"order_id":"o","status":7}}"#
        do {
            _ = try CloudEvent<OrderData>.decode(Array(json.utf8))
            Issue.record("decoded a bad event")
        } catch {
            #expect(error.description.contains("data.status"), "\(error)")
        }
    }
}

@Suite struct RFC3339Tests {
    @Test func formatsUTCWithMilliseconds() {
        #expect(RFC3339.format(Date(timeIntervalSince1970: 0)) == "1970-01-01T00:00:00.000Z")
        #expect(RFC3339.format(Date(timeIntervalSince1970: 1_795_253_400.123)) == "2026-11-21T09:30:00.123Z")
        #expect(RFC3339.format(Date(timeIntervalSince1970: -1)) == "1969-12-31T23:59:59.000Z")
        #expect(RFC3339.format(Date(timeIntervalSince1970: 951_782_400)) == "2000-02-29T00:00:00.000Z")
    }

    @Test func parsesOffsetsAndFractions() {
        #expect(RFC3339.parse("2026-11-21T09:30:00Z") == Date(timeIntervalSince1970: 1_795_253_400))
        #expect(RFC3339.parse("2026-11-21T11:30:00+02:00") == Date(timeIntervalSince1970: 1_795_253_400))
        #expect(RFC3339.parse("2026-11-21T07:00:00-02:30") == Date(timeIntervalSince1970: 1_795_253_400))
        #expect(RFC3339.parse("2020-09-15T07:54:02.305516Z")!.timeIntervalSince1970 == 1_600_156_442.305516)
    }

    @Test(arguments: [
        "", "2026-11-21", "2026-13-01T00:00:00Z", "2026-02-30T00:00:00Z", "2026-11-21T25:00:00Z",
        "2026-11-21T07:30:00", "2026-11-21T07:30:00.Z", "2026-11-21T07:30:00Zjunk", "2026-11-21 07:30:00Z",
    ])
    func rejectsNonRFC3339(_ text: String) {
        #expect(RFC3339.parse(text) == nil)
    }

    /// Shown by the fuzz target's round-trip property (Fuzz/): these parsed, to instants outside
    /// the four-digit UTC years, so an event accepted with one was passed on with a time that was
    /// garbled ("000/-12-31…") or 10000 years off ("0000-01-01…").
    @Test(arguments: [
        "0000-01-01T00:00:00+01:00", "0000-01-01T00:59:59.999+01:00", "9999-12-31T23:59:59-01:00", "9999-12-31T23:59:59.9996Z",
        "9999-12-31T23:59:60Z",
    ])
    func refusesInstantsItCannotWriteBack(_ text: String) {
        #expect(RFC3339.parse(text) == nil)
    }

    @Test func writesBackTheFirstAndLastInstants() {
        #expect(RFC3339.parse("0000-01-01T01:00:00+01:00").map(RFC3339.format) == "0000-01-01T00:00:00.000Z")
        #expect(RFC3339.parse("0000-01-01T00:00:00.0006Z").map(RFC3339.format) == "0000-01-01T00:00:00.001Z")
        #expect(RFC3339.parse("9999-12-31T23:59:59.999Z").map(RFC3339.format) == "9999-12-31T23:59:59.999Z")
        #expect(RFC3339.parse("9999-12-31T22:59:59.999-01:00").map(RFC3339.format) == "9999-12-31T23:59:59.999Z")
    }

    @Test func roundTripsRandomInstants() {
        for _ in 0..<1000 {
            let ms = Int64.random(in: -2_000_000_000_000...4_000_000_000_000)
            let date = Date(timeIntervalSince1970: Double(ms) / 1000)
            let back = RFC3339.parse(RFC3339.format(date))!.timeIntervalSince1970 * 1000
            #expect(abs(back - Double(ms)) < 0.01, "\(ms) → \(RFC3339.format(date)) → \(back)")
        }
    }
}

@Suite struct TopicTests {
    @Test func validatesTopics() {
        #expect(Topic.problem(with: "order.status.NEW") == nil)
        #expect(Topic.problem(with: "device.location.2744A672-D4A9-36E7") == nil)
        #expect(Topic.problem(with: "") != nil)
        #expect(Topic.problem(with: "has space") != nil)
        #expect(Topic.problem(with: "ünïcode") != nil)
        #expect(Topic.problem(with: String(repeating: "a", count: 256)) != nil)
    }
}
