import Bus
import Foundation
import PlatformLauncher
import Testing
import Wire

/// Tracing across the real processes (docs/tracing.md): one ride through the gateway with every
/// process exporting spans over OTLP/HTTP to an independent receiver (Python, opentelemetry-proto),
/// and the spans joined into traces that cross the processes, every parent link in place.
@Suite(.serialized) struct TracingIntegrationTests {
    /// A span as `interop/otlp_receiver.py` writes it.
    struct ReceivedSpan: Decodable, Sendable {
        let serviceName: String
        let instanceID: String
        let traceID: String
        let spanID: String
        let parentSpanID: String
        let name: String
        let kind: String
        enum CodingKeys: String, CodingKey {
            case name, kind
            case serviceName = "service_name"
            case instanceID = "instance_id"
            case traceID = "trace_id"
            case spanID = "span_id"
            case parentSpanID = "parent_span_id"
        }
    }

    /// The receiver, started on a free port; its spans read from its output file.
    struct Receiver {
        let process: Process
        let output: String
        let port: Int

        static func start(directory: String) throws -> Receiver {
            let output = "\(directory)/spans.jsonl"
            let port = try FreePort.next()
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("interop/otlp_receiver.py").path
            process.arguments = ["python3", script, "\(port)", output]
            process.standardOutput = FileHandle.nullDevice
            try process.run()
            return Receiver(process: process, output: output, port: port)
        }

        var spans: [ReceivedSpan] { Self.spans(in: output) }

        static func spans(in output: String) -> [ReceivedSpan] {
            let text = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
            return text.split(separator: "\n").compactMap { try? JSONCoding.decode(ReceivedSpan.self, from: Array($0.utf8)) }
        }

        /// SIGKILL: started from the test process, Python did not end on SIGTERM (and `waitUntilExit` then spun).
        func stop() {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }

    static let callerSpan = "1111111111111111"
    static let callerTrace = "4bf92f3577b34da6a3ce929d0e0e4736"

    @Test(arguments: ["http/protobuf", "http/json"])
    func oneRidesSpansJoinAcrossTheProcesses(otlpProtocol: String) async throws {
        guard (try? await runCommand("/usr/bin/env", ["python3", "-c", "import opentelemetry.proto"]))?.status == 0 else {
            Issue.record("opentelemetry-proto is not installed (make test-deps)")
            return
        }
        let directory = try makeScratchDirectory("tracing")
        let receiver = try Receiver.start(directory: directory)
        defer { receiver.stop() }
        let environment = [
            "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:\(receiver.port)", "OTEL_EXPORTER_OTLP_PROTOCOL": otlpProtocol,
            // Export every 100 ms rather than every 5 s, so the test need not wait.
            "OTEL_BSP_SCHEDULE_DELAY": "100",
        ]
        try await withTestBus("tracing", environment: environment) { bus in
            let apps = try await GatewayIntegrationTests.Apps.start(bus)
            let gateway = apps.gateway

            // Booking continues the caller's trace; accepting starts one (a malformed traceparent is ignored).
            let booked = try await HTTPProbe.send(
                "POST", gateway.base + "/v1/orders",
                headers: [
                    "Authorization": "Bearer \(apps.rider.token)", "Content-Type": "application/json",
                    "traceparent": "00-\(Self.callerTrace)-\(Self.callerSpan)-01",
                ],
                body: Array(GatewayIntegrationTests.booking.utf8), timeout: .seconds(10))
            #expect(booked.status == 201, "\(booked.text)")
            let bookedTrace = try #require(
                TraceHeaders(traceparent: booked.headers["traceparent"]), "the reply's traceparent: \(booked.headers)")
            #expect(bookedTrace.traceID == Self.callerTrace[...], "the gateway continued the caller's trace")
            guard let id = (try? JSONCoding.decode(JSONValue.self, from: Array(booked.body)))?["id"]?.stringValue else {
                throw TestFailure("booking: \(booked.text)")
            }

            let accepted = try await HTTPProbe.send(
                "POST", gateway.base + "/v1/orders/\(id)/accept",
                headers: [
                    "Authorization": "Bearer \(apps.driver.token)", "traceparent": "00-not-a-trace-" + String(repeating: "f", count: 300),
                ],
                timeout: .seconds(10))
            #expect(accepted.status == 200, "a malformed traceparent is ignored, never an error: \(accepted.text)")
            let acceptedTrace = try #require(TraceHeaders(traceparent: accepted.headers["traceparent"]))
            #expect(acceptedTrace.traceID != bookedTrace.traceID, "a new trace")
            try await apps.status(of: id, is: "PICKING_UP")
            try await apps.finish(id)

            // Spans arrive in batches from every process: wait until the booking's trace and the
            // accept's (order → reactor → trips → …) have crossed five processes with every parent present.
            let traceIDs = [String(bookedTrace.traceID), String(acceptedTrace.traceID)]
            let output = receiver.output
            do {
                try await eventually("one trace crosses five processes, every parent link in place", timeout: .seconds(30)) {
                    Self.summary(Receiver.spans(in: output), traces: traceIDs).done
                }
            } catch {
                throw TestFailure("\(error): \(Self.summary(receiver.spans, traces: traceIDs).report)")
            }
            let spans = receiver.spans
            let booking = spans.filter { $0.traceID == bookedTrace.traceID }
            // The gateway's server span is the root of what we did, a child of the caller's span.
            #expect(
                booking.contains { $0.serviceName == "ride-gateway" && $0.kind == "server" && $0.parentSpanID == Self.callerSpan },
                "\(booking.map(\.name))")
            #expect(booking.contains { $0.spanID == bookedTrace.spanID }, "the reply's traceparent names a span of the trace")
            let names = Set(spans.filter { $0.traceID == acceptedTrace.traceID }.map(\.name))
            for expected in [
                "call orders.accept", "op orders.accept", "publish order.status", "react orders order.status", "call trips.create",
                "op trips.create",
            ] {
                #expect(names.contains(expected), "\(expected) in \(names.sorted())")
            }
            #expect(spans.allSatisfy { !$0.instanceID.isEmpty }, "service.instance.id on every resource")
        }
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// Whether one of `traces` crosses five processes and none has a span without its parent; what was seen.
    static func summary(_ spans: [ReceivedSpan], traces ids: [String]) -> (done: Bool, report: String) {
        let traces = ids.map { trace in spans.filter { $0.traceID == trace } }
        let services = traces.map { Set($0.map(\.serviceName)) }
        let orphans = traces.map { Self.orphans(in: $0) }
        let report =
            "services \(services.map { $0.sorted() }); orphans \(orphans.map { $0.map { "\($0.serviceName): \($0.name)" } }); \(spans.count) spans"
        return (services.contains { $0.count >= 5 } && orphans.allSatisfy(\.isEmpty), report)
    }

    /// Spans whose parent is not in the trace (besides the test's own caller span, which nobody exports).
    static func orphans(in trace: [ReceivedSpan]) -> [ReceivedSpan] {
        let ids = Set(trace.map(\.spanID))
        return trace.filter { !$0.parentSpanID.isEmpty && $0.parentSpanID != callerSpan && !ids.contains($0.parentSpanID) }
    }
}
