import Foundation
import Testing
import Wire
import ZeroMQ

@testable import Bus

/// Trace context on the wire (docs/tracing.md): W3C `traceparent`/`tracestate` parsed strictly,
/// carried by events and 7/MDP requests, and ignored — never refused — when malformed.
@Suite struct TraceContextTests {
    static let parent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
    static let trace = TraceHeaders(traceparent: parent, tracestate: "congo=t61rcWkgMzE,rojo=00f067aa0ba902b7")!

    @Test func aWellFormedTraceparentIsKept() throws {
        let headers = try #require(TraceHeaders(traceparent: Self.parent))
        #expect(headers.traceID == "0af7651916cd43dd8448eb211c80319c")
        #expect(headers.spanID == "b7ad6b7169203331")
        #expect(headers.tracestate == nil)
        // A later version may add fields after a dash; we read the ones we know.
        #expect(TraceHeaders(traceparent: "01" + Self.parent.dropFirst(2) + "-extra") != nil)
    }

    @Test(arguments: [
        "", "00", "garbage", String(parent.dropLast()), parent + "0", parent + "-more",  // version 00 is exactly 55
        parent.uppercased(), "ff" + parent.dropFirst(2),  // uppercase; the forbidden version
        "00-00000000000000000000000000000000-b7ad6b7169203331-01", "00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01",
        "00-0af7651916cd43dd8448eb211c80319g-b7ad6b7169203331-01", "00_0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
        "01" + parent.dropFirst(2) + "-" + String(repeating: "x", count: 300),  // oversized
        String(repeating: "0", count: 100_000),
    ])
    func aMalformedOrOversizedTraceparentIsIgnored(_ value: String) {
        #expect(TraceHeaders(traceparent: value, tracestate: "a=b") == nil)
    }

    @Test func aMalformedTracestateIsDroppedAndItsTraceparentKept() throws {
        for bad in ["", "é=1", "a=\n", String(repeating: "a", count: TraceHeaders.maxTracestateLength + 1)] {
            let headers = try #require(TraceHeaders(traceparent: Self.parent, tracestate: bad))
            #expect(headers.tracestate == nil, "\(bad)")
        }
    }

    // MARK: Events

    static let time = RFC3339.parse("2026-11-21T09:30:00.123Z")!

    static func envelope(trace: TraceHeaders?) -> [UInt8] {
        EnvelopeWriter.write(
            id: "e1", source: "orders", type: "order.status", time: time, sequence: 42, data: Array(#"{"a":1}"#.utf8), trace: trace)
    }

    @Test func anEventCarriesItsTraceThroughBothDecodersAndTheEncoder() throws {
        for trace in [Self.trace, TraceHeaders(traceparent: Self.parent)!] {
            let bytes = Self.envelope(trace: trace)
            let strict = try CloudEvent<JSONValue>.decode(bytes)
            let fast = try #require(CloudEvent<JSONValue>.readWhole(bytes))
            #expect(strict.trace == trace)
            #expect(fast == strict)
            #expect(try CloudEvent<JSONValue>.decode(strict.encoded()) == strict)
            #expect(strict.withData(1).trace == trace)
        }
    }

    @Test func anEventWithoutTraceHasNoTraceAttributes() throws {
        let bytes = Self.envelope(trace: nil)
        #expect(!String(decoding: bytes, as: UTF8.self).contains("trace"))
        let event = try CloudEvent<JSONValue>.decode(bytes)
        #expect(event.trace == nil)
        #expect(CloudEvent<JSONValue>.readWhole(bytes) == event)
        #expect(!String(decoding: try event.encoded(), as: UTF8.self).contains("trace"))
    }

    @Test(arguments: [
        #""traceparent":"nonsense""#, #""traceparent":42"#, #""traceparent":null"#, #""traceparent":{"a":1},"tracestate":"a=b""#,
        #""traceparent":"\#(String(repeating: "0", count: 5000))""#,
    ])
    func anEventWithAMalformedTraceIsKeptWithoutIt(_ attribute: String) throws {
        let json =
            #"{"specversion":"1.0","id":"e1","source":"orders","type":"t","time":"2026-11-21T09:30:00.123Z","sequence":"1",\#(attribute),"data":{}}"#
        let event = try CloudEvent<JSONValue>.decode(Array(json.utf8))
        #expect(event.trace == nil)
        #expect(event.sequence == 1)
        // The one-pass reader agrees, or leaves the event to the strict decoder.
        if let fast = CloudEvent<JSONValue>.readWhole(Array(json.utf8)) { #expect(fast == event) }
    }

    // MARK: 7/MDP requests

    /// The correlation line a request starts with, without its newline.
    private func line(_ id: UInt64, trace: TraceHeaders? = nil) -> ArraySlice<UInt8> { RequestID.line(id, trace: trace).dropLast() }

    @Test func theCorrelationLineCarriesTheTraceAndStillParses() throws {
        #expect(RequestID.parse(line(42, trace: Self.trace)) == 42)
        #expect(RequestID.trace(in: line(42, trace: Self.trace)) == Self.trace)
        let request = try ServiceRequest(frames: RequestID.prefixed([Frame(frame: "get\n{}")], id: 42, trace: Self.trace))
        #expect(request.trace == Self.trace)
        #expect(request.op == "get")
        let parentOnly = line(7, trace: TraceHeaders(traceparent: Self.parent))
        #expect(RequestID.parse(parentOnly) == 7)
        #expect(RequestID.trace(in: parentOnly) == TraceHeaders(traceparent: Self.parent))
    }

    @Test func aRequestWithoutTraceOrWithAMalformedOneHasNone() throws {
        #expect(RequestID.trace(in: line(42)) == nil)
        #expect(try ServiceRequest(frames: [Frame(frame: "get\n{}")]).trace == nil)
        for bad in ["r1 nonsense", "r1  ", "r1 " + String(repeating: "f", count: 2000), "x " + Self.parent + " \u{1}"] {
            #expect(RequestID.trace(in: Frame(frame: bad)[...]) == nil || bad.hasPrefix("x"), "\(bad.prefix(20))")
        }
        // A foreign or malformed id with a valid trace after it: the trace is read, the id is not ours.
        #expect(RequestID.parse(Frame(frame: "x " + Self.parent)[...]) == nil)
        #expect(RequestID.line(in: Frame(frame: "x " + Self.parent + "\nget\n{}")) == nil)
    }

    @Test func aWorkerAnswersATracedRequestAndEchoesItsLineWhole() async throws {
        var router = OpRouter(service: "echo")
        router.on("say", params: JSONValue.self) { params, _ in params }
        for idLine in [RequestID.line(9, trace: Self.trace), Array("r9 not-a-traceparent\n".utf8), RequestID.line(9)] {
            let reply = await router.handle([idLine + Array(#"say\#n{"x":1}"#.utf8)], logger: .init(label: "test"))
            #expect(reply == [idLine + Array(#"200\#n{"x":1}"#.utf8)])
        }
    }

    @Test func withTracingOffASpanIsNothingAndNothingIsSent() async throws {
        #expect(!Trace.isEnabled)
        let got = await Trace.span("op x.y", kind: .server, parent: Self.trace) { span in span == nil }
        #expect(got)
        #expect(Trace.currentHeaders == nil)
    }
}
