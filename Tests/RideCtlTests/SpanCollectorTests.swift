import Foundation
import PlatformLauncher
import ServiceKit
import SettingsKit
import Testing
import Wire

@testable import RideCtlKit

/// The collector's answers, and what it keeps: everything of a good request, nothing of a bad one.
@Suite struct SpanCollectorTests {
    let directory = NSTemporaryDirectory() + "collector-\(UUID().uuidString)"
    var path: String { directory + "/spans.jsonl" }

    func collector(maxBodyBytes: Int = SpanCollector.defaultMaxBodyBytes) throws -> SpanCollector {
        SpanCollector(writer: try SpanFileWriter(path: path), maxBodyBytes: maxBodyBytes, logger: CLILogging.logger)
    }

    func stored() throws -> [Span] { try SpanFile.read(path: path).spans }

    @Test func aTraceExportIsStoredAndAnsweredAsOTLPSays() async throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let body = Array(RideTraceFixture.otlpJSON(RideTraceFixture.spans).utf8)
        let collector = try collector()
        let reply = await collector.receive(contentType: "application/json", contentEncoding: nil, body: body)
        #expect(reply == SpanCollector.Reply(status: 200, json: #"{"partialSuccess":{}}"#, stored: RideTraceFixture.spans.count))
        #expect(try stored().count == RideTraceFixture.spans.count)
    }

    @Test func badRequestsAreRefusedAndLeaveNothing() async throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let collector = try collector(maxBodyBytes: 4096)
        let good = Array(RideTraceFixture.otlpJSON(Array(RideTraceFixture.spans.prefix(2))).utf8)
        // One bad span spoils the request: none of it is kept.
        let spoiled = Array(
            RideTraceFixture.otlpJSON(Array(RideTraceFixture.spans.prefix(2))).replacingOccurrences(of: "0000000000000002", with: "zz").utf8
        )
        let bad = await collector.receive(contentType: "application/json", contentEncoding: nil, body: spoiled)
        #expect(bad.status == 400)
        #expect(bad.json.contains(#"spanId: must be 16 hex digits, got \"zz\""#), "\(bad.json)")
        #expect(await collector.receive(contentType: "application/json", contentEncoding: nil, body: Array("{oops".utf8)).status == 400)
        let protobuf = await collector.receive(contentType: "application/x-protobuf", contentEncoding: nil, body: good)
        #expect(protobuf.status == 415)
        #expect(protobuf.json.contains("OTEL_EXPORTER_OTLP_PROTOCOL=http/json"))
        #expect(await collector.receive(contentType: "application/json", contentEncoding: "gzip", body: good).status == 415)
        let large = await collector.receive(
            contentType: "application/json", contentEncoding: nil, body: good + Array(repeating: UInt8(ascii: " "), count: 5000))
        #expect(large.status == 413)
        #expect(try stored().isEmpty)
        #expect(
            await collector.receive(contentType: "application/json; charset=utf-8", contentEncoding: "identity", body: good).status == 200)
        #expect(try stored().count == 2)
    }

    @Test func overHTTPTooWhatUpTracesRuns() async throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let collection = try await TraceCollection.start(listen: HostPort(host: "127.0.0.1", port: 0), path: path)
        #expect(
            collection.environment == [
                "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:\(collection.port)", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json",
            ])
        let url = "http://127.0.0.1:\(collection.port)/v1/traces"
        let json = ["Content-Type": "application/json"]
        let ok = try await HTTPProbe.send(
            "POST", url, headers: json, body: Array(RideTraceFixture.otlpJSON(RideTraceFixture.spans).utf8), timeout: .seconds(30))
        #expect(ok.status == 200)
        #expect(ok.text == #"{"partialSuccess":{}}"#)
        let bad = try await HTTPProbe.send(
            "POST", url, headers: json, body: Array(#"{"resourceSpans":[{"scopeSpans":[{"spans":[{}]}]}]}"#.utf8), timeout: .seconds(30))
        #expect(bad.status == 400)
        #expect(bad.text.contains("resourceSpans[0].scopeSpans[0].spans[0].traceId: missing"))
        let huge = try await HTTPProbe.send(
            "POST", url, headers: json, body: Array(repeating: UInt8(ascii: " "), count: SpanCollector.defaultMaxBodyBytes + 1),
            timeout: .seconds(30))
        #expect(huge.status == 413)
        let metrics = try await HTTPProbe.send(
            "POST", "http://127.0.0.1:\(collection.port)/v1/metrics", headers: json, body: Array("{}".utf8), timeout: .seconds(30))
        #expect(metrics.status == 200)
        await collection.stop()
        #expect(try stored().sorted { $0.spanID < $1.spanID } == RideTraceFixture.spans.sorted { $0.spanID < $1.spanID })
        await #expect(throws: (any Error).self) { _ = try await HTTPProbe.get(url) }
    }
}
