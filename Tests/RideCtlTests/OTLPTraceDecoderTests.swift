import Foundation
import Testing
import Wire

@testable import RideCtlKit

/// OTLP JSON into spans, and what it refuses.
@Suite struct OTLPTraceDecoderTests {
    func decode(_ text: String) throws(OTLPTraceDecoder.Problem) -> [Span] { try OTLPTraceDecoder.decode(Array(text.utf8)) }

    func problem(_ text: String) -> String {
        do {
            _ = try decode(text)
            return "accepted"
        } catch {
            return error.message
        }
    }

    let trace = "5b8efff798038103d269b633813fc60c"
    func request(span: String, resource: String = #"{"attributes":[{"key":"service.name","value":{"stringValue":"ride-orders"}}]}"#)
        -> String
    {
        #"{"resourceSpans":[{"resource":\#(resource),"scopeSpans":[{"scope":{"name":"ride"},"spans":[\#(span)]}]}]}"#
    }

    @Test func theFixtureSurvivesTheRoundTripThroughOTLPJSON() throws {
        let spans = try decode(RideTraceFixture.otlpJSON(RideTraceFixture.spans))
        let sorted = { (spans: [Span]) in spans.sorted { ($0.traceID, $0.spanID) < ($1.traceID, $1.spanID) } }
        #expect(sorted(spans) == sorted(RideTraceFixture.spans))
    }

    @Test func aSpanAsTheSpecWritesIt() throws {
        let span = #"""
            {"traceId":"5B8EFFF798038103D269B633813FC60C","spanId":"eee19b7ec3c1b174","parentSpanId":"eee19b7ec3c1b173","name":"op orders.accept",
             "kind":2,"startTimeUnixNano":"1544712660000000000","endTimeUnixNano":"1544712661000000000",
             "attributes":[{"key":"ride.order_id","value":{"stringValue":"o-1"}},{"key":"n","value":{"intValue":"42"}},{"key":"ok","value":{"boolValue":true}},
                           {"key":"x","value":{"doubleValue":1.5}}],
             "status":{"code":2,"message":"boom"}}
            """#
        let spans = try decode(
            request(
                span: span,
                resource:
                    #"{"attributes":[{"key":"service.name","value":{"stringValue":"ride-orders"}},{"key":"service.instance.id","value":{"stringValue":"i-1"}}]}"#
            )
        )
        #expect(
            spans == [
                Span(
                    traceID: trace, spanID: "eee19b7ec3c1b174", parentSpanID: "eee19b7ec3c1b173", name: "op orders.accept", kind: .server,
                    service: "ride-orders",
                    instance: "i-1", start: 1_544_712_660_000_000_000, end: 1_544_712_661_000_000_000,
                    attributes: ["ride.order_id": "o-1", "n": "42", "ok": "true", "x": "1.5"],
                    status: "error: boom")
            ])
    }

    @Test func whatProtobufsJSONMappingAllowsIsTakenToo() throws {
        // snake_case keys, enum names, times as numbers, ids in base64, no resource (unknown_service).
        let span =
            #"{"trace_id":"W47/95gDgQPSabYzgT/GDA==","span_id":"7uGbfsPBsXQ=","parent_span_id":"","name":"publish order.status","kind":"SPAN_KIND_PRODUCER","start_time_unix_nano":1000,"end_time_unix_nano":2000}"#
        let spans = try decode(#"{"resource_spans":[{"scope_spans":[{"spans":[\#(span)]}]}]}"#)
        #expect(spans.map(\.traceID) == [trace])
        #expect(spans.map(\.spanID) == ["eee19b7ec3c1b174"])
        #expect(spans.first?.parentSpanID == nil)
        #expect(spans.first?.kind == .producer)
        #expect(spans.first?.service == "unknown_service")
        #expect(spans.first?.duration == 1000)
        #expect(try decode(#"{"resourceSpans":[]}"#).isEmpty)
    }

    @Test func badBodiesAreRefusedNamingWhatIsWrong() {
        let good = #""traceId":"\#(trace)","spanId":"eee19b7ec3c1b174","name":"x","startTimeUnixNano":"1","endTimeUnixNano":"2""#
        #expect(problem("{oops").hasPrefix("the body is not JSON"))
        #expect(problem("[1]") == "the body must be a JSON object (an OTLP ExportTraceServiceRequest)")
        #expect(problem(#"{"spans":[]}"#).hasPrefix("resourceSpans: missing"))
        #expect(problem(#"{"resourceSpans":{}}"#) == "resourceSpans: must be an array")
        #expect(problem(request(span: "{\(good)}")) == "accepted")
        let path = "resourceSpans[0].scopeSpans[0].spans[0]"
        #expect(
            problem(request(span: "{\(good.replacingOccurrences(of: trace, with: "abc"))}"))
                == "\(path).traceId: must be 32 hex digits, got \"abc\"")
        #expect(
            problem(request(span: "{\(good.replacingOccurrences(of: trace, with: String(repeating: "0", count: 32)))}"))
                == "\(path).traceId: must not be all zeros")
        #expect(
            problem(request(span: "{\(good.replacingOccurrences(of: #""spanId":"eee19b7ec3c1b174","#, with: ""))}"))
                == "\(path).spanId: missing or not a string")
        #expect(
            problem(request(span: "{\(good.replacingOccurrences(of: #""name":"x""#, with: #""name":5"#))}"))
                == "\(path).name: missing or not a non-empty string")
        #expect(
            problem(request(span: "{\(good.replacingOccurrences(of: #""2""#, with: #""0""#))}"))
                == "\(path).endTimeUnixNano: 0 is before startTimeUnixNano 1")
        #expect(
            problem(request(span: "{\(good.replacingOccurrences(of: #""1""#, with: #""soon""#))}"))
                == "\(path).startTimeUnixNano: must be Unix nanoseconds as a decimal string, got \"soon\"")
        #expect(problem(request(span: "{\(good),\"kind\":9}")) == "\(path).kind: must be a span kind from 0 to 5, got 9")
        #expect(problem(request(span: "{\(good),\"attributes\":[{\"value\":{}}]}")) == "\(path).attributes[0].key: missing or not a string")
        #expect(
            problem(request(span: "{\(good),\"attributes\":[{\"key\":\"k\",\"value\":5}]}")).hasPrefix(
                "\(path).attributes[0].value: must be an AnyValue object"))
        #expect(problem(request(span: "7")) == "\(path): must be an object")
    }
}
