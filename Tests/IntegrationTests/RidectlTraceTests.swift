import Foundation
import PlatformLauncher
import ServiceKit
import Testing
import Wire

/// `ridectl traces collect` and `ridectl trace` as an operator runs them: spans POSTed over HTTP
/// read back as a ride's timeline; without spans, the timeline from a real platform's events.
@Suite(.timeLimit(.minutes(5))) struct RidectlTraceTests {
    /// A hand-made OTLP JSON export: orders takes a booking from the gateway and publishes NEW.
    static let export = #"""
        {"resourceSpans":[
         {"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"ride-gateway"}}]},
          "scopeSpans":[{"scope":{"name":"ride"},"spans":[
           {"traceId":"0af7651916cd43dd8448eb211c80319c","spanId":"00000000000000a1","name":"POST /v1/orders","kind":2,
            "startTimeUnixNano":"1764064800000000000","endTimeUnixNano":"1764064800030000000"},
           {"traceId":"0af7651916cd43dd8448eb211c80319c","spanId":"00000000000000a2","parentSpanId":"00000000000000a1","name":"call orders.create","kind":3,
            "startTimeUnixNano":"1764064800001000000","endTimeUnixNano":"1764064800029000000",
            "attributes":[{"key":"rpc.system","value":{"stringValue":"mdp"}},{"key":"rpc.service","value":{"stringValue":"orders"}},{"key":"rpc.method","value":{"stringValue":"create"}}]}]}]},
         {"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"ride-orders"}},{"key":"service.instance.id","value":{"stringValue":"orders-1"}}]},
          "scopeSpans":[{"scope":{"name":"ride"},"spans":[
           {"traceId":"0af7651916cd43dd8448eb211c80319c","spanId":"00000000000000b1","parentSpanId":"00000000000000a2","name":"op orders.create","kind":2,
            "startTimeUnixNano":"1764064800013000000","endTimeUnixNano":"1764064800025000000",
            "attributes":[{"key":"ride.order_id","value":{"stringValue":"order-1"}},{"key":"ride.order_status","value":{"stringValue":"NEW"}}]},
           {"traceId":"0af7651916cd43dd8448eb211c80319c","spanId":"00000000000000b2","parentSpanId":"00000000000000b1","name":"db.commit","kind":1,
            "startTimeUnixNano":"1764064800020000000","endTimeUnixNano":"1764064800024000000"},
           {"traceId":"0af7651916cd43dd8448eb211c80319c","spanId":"00000000000000b3","parentSpanId":"00000000000000b1","name":"publish order.status","kind":4,
            "startTimeUnixNano":"1764064800027000000","endTimeUnixNano":"1764064800027100000",
            "attributes":[{"key":"ride.order_id","value":{"stringValue":"order-1"}},{"key":"ride.order_status","value":{"stringValue":"NEW"}},
                          {"key":"ride.event_type","value":{"stringValue":"order.status"}}]}]}]}]}
        """#

    @Test func spansPostedToTheCollectorAreReadBackAsTheRidesTimeline() async throws {
        let scratch = try makeScratchDirectory("trace-collect")
        let port = try FreePort.next()
        let spans = scratch + "/spans.jsonl"
        let collector = Process()
        collector.executableURL = URL(fileURLWithPath: Binaries.ridectl)
        collector.arguments = ["traces", "collect", "--listen", "127.0.0.1:\(port)", "--out", spans]
        collector.standardOutput = FileHandle.nullDevice
        try collector.run()
        defer {
            collector.terminate()
            collector.waitUntilExit()
        }
        let url = "http://127.0.0.1:\(port)/v1/traces"
        let json = ["Content-Type": "application/json"]
        try await eventually("the collector listens", timeout: .seconds(30)) {
            (try? await HTTPProbe.send("POST", url, headers: json, body: Array(#"{"resourceSpans":[]}"#.utf8)))?.status == 200
        }
        let stored = try await HTTPProbe.send("POST", url, headers: json, body: Array(Self.export.utf8), timeout: .seconds(30))
        #expect(stored.status == 200)
        #expect(stored.text == #"{"partialSuccess":{}}"#)
        let refused = try await HTTPProbe.send(
            "POST", url, headers: json, body: Array(#"{"resourceSpans":[{"scopeSpans":[{"spans":[{"name":"x"}]}]}]}"#.utf8))
        #expect(refused.status == 400)
        #expect(refused.text.contains("traceId: missing"), "\(refused.text)")
        #expect(try await HTTPProbe.send("POST", url, headers: ["Content-Type": "application/x-protobuf"], body: [1, 2, 3]).status == 415)
        #expect(
            try String(contentsOfFile: spans, encoding: .utf8).split(separator: "\n").count == 5,
            "the five spans, nothing of the refused requests")

        let trace = try await runCommand(Binaries.ridectl, ["trace", "order-1", "--spans", spans])
        #expect(trace.status == 0, "\(trace.stderr)")
        let lines = trace.stdout.split(separator: "\n").map(String.init)
        #expect(lines.first == "order order-1: 1 step from \(spans) (1 trace)")
        #expect(
            lines.dropFirst(2).first
                == "10:00:00.024            NEW               ride-orders          -   12.0ms   8.00ms   4.00ms   3.00ms   26.0ms  op orders.create ← ride-gateway POST /v1/orders",
            "\(trace.stdout)")
        let asJSON = try await runCommand(Binaries.ridectl, ["trace", "order-1", "--spans", spans, "--json"])
        let timeline = try JSONCoding.decode(JSONValue.self, from: Array(asJSON.stdout.utf8))
        #expect(timeline["steps"]?[0]?["hops"]?["broker_queue_ms"] == 12)

        // A line the collector did not write is skipped with a warning; an unknown order is said so.
        try FileHandle(forWritingAtPath: spans).map { handle in
            try handle.seekToEnd()
            try handle.write(contentsOf: Data("not a span\n".utf8))
            try handle.close()
        }
        let unknown = try await runCommand(Binaries.ridectl, ["trace", "order-404", "--spans", spans, "--from", "spans"])
        #expect(unknown.status == 1)
        #expect(unknown.stderr.contains("warning: skipped 1 malformed line of \(spans)"), "\(unknown.stderr)")
        #expect(unknown.stderr.contains("order order-404: no span of it in \(spans)"), "\(unknown.stderr)")
        try? FileManager.default.removeItem(atPath: scratch)
    }

    @Test func withoutSpansTheTimelineComesFromTheEvents() async throws {
        try await withTestBus("trace-events") { bus in
            let platform = try await OrdersIntegrationTests.Platform.start(bus)
            let created = try await platform.call("create", as: platform.ann, OrdersIntegrationTests.trip)
            guard created.status == 201, case .string(let id)? = created.body["id"] else { throw TestFailure("create: \(created)") }
            #expect(try await platform.call("accept", as: platform.dan, #""id":"\#(id)""#).status == 200)
            let noSpans = ["--data-dir", bus.scratch + "/no-spans-here"]
            // The reactor creates the trip and moves the order on shortly after the acceptance.
            var last = try await runCommand(Binaries.ridectl, ["trace", id] + noSpans + bus.ridectlFlags)
            let deadline = ContinuousClock.now + .seconds(20)
            while !(last.stdout.contains("PICKING_UP") && last.stdout.contains("trip.created")), ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(300))
                last = try await runCommand(Binaries.ridectl, ["trace", id] + noSpans + bus.ridectlFlags)
            }
            #expect(last.status == 0, "\(last.stderr)")
            #expect(last.stdout.contains("PICKING_UP") && last.stdout.contains("trip.created"), "\(last.stdout)")
            let labels = last.stdout.split(separator: "\n").dropFirst(2).compactMap {
                $0.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first(where: { !$0.hasPrefix("+") })
            }
            #expect(Array(labels.prefix(1)) == ["NEW"], "\(last.stdout)")
            #expect(labels.firstIndex(of: "ACCEPTED").map { $0 < (labels.firstIndex(of: "PICKING_UP") ?? 0) } == true, "\(last.stdout)")
            #expect(last.stdout.contains("orders#"), "each event's source and sequence")

            let json = try await runCommand(Binaries.ridectl, ["trace", id, "--json"] + noSpans + bus.ridectlFlags)
            let timeline = try JSONCoding.decode(JSONValue.self, from: Array(json.stdout.utf8))
            #expect(timeline["origin"] == "events")
            #expect(timeline["steps"]?[0]?["status"] == "NEW")

            let unknown = try await runCommand(Binaries.ridectl, ["trace", "no-such-order"] + noSpans + bus.ridectlFlags)
            #expect(unknown.status == 1)
            #expect(unknown.stderr.contains("no order no-such-order"), "\(unknown.stderr)")
        }
        let nobody = try await runCommand(
            Binaries.ridectl,
            ["trace", "o-1", "--data-dir", "/nonexistent", "--broker", "tcp://127.0.0.1:\(try FreePort.next())", "--timeout-ms", "300"])
        #expect(nobody.status == 2)
        #expect(nobody.stderr.contains("cannot ask orders for its events"), "\(nobody.stderr)")
    }

    /// End to end with real exported spans: `ridectl up --traces --simulate` records the rides'
    /// spans, and `ridectl trace` shows a ride's hops from them. The processes export spans once the
    /// `tracing` branch (W3C trace context, swift-otel over OTLP/HTTP JSON) is merged: enable it then.
    @Test(.timeLimit(.minutes(5)))
    func upWithTracesRecordsEachHopOfARide() async throws {
        let scratch = try makeScratchDirectory("up-traces")
        let offset = 9_500  // 15055–18704: below the free ports (20000–), clear of the other suites that run `up`
        let supervisor = ProcessSupervisor(output: .files(directory: scratch))
        try supervisor.start(
            name: "up", executable: Binaries.ridectl,
            arguments: [
                "up", "--traces", "--simulate", "--port-offset", "\(offset)", "--data-dir", "\(scratch)/data", "--bin-dir",
                Binaries.directory,
            ],
            // The production cost of a password hash takes seconds per sign-up in a debug build on a
            // busy machine; the simulation signs up twenty people before its first ride.
            environment: ["RIDE_PASSWORD_ROUNDS": "2000"])
        defer { supervisor.killAll() }
        let log = { (try? String(contentsOfFile: supervisor.logPath(of: "up")!, encoding: .utf8)) ?? "" }
        // The simulation prints "ride o-… (Driver N to the pickup)" once a driver accepted.
        var orderID: String?
        let deadline = ContinuousClock.now + .seconds(180)
        while orderID == nil, ContinuousClock.now < deadline {
            try await Task.sleep(for: .seconds(1))
            orderID = log().split(separator: "\n").lazy.compactMap { line in
                line.split(separator: " ").drop { $0 != "ride" }.dropFirst().first.map(String.init)
            }
            .first { $0.hasPrefix("o-") }
        }
        let id = try #require(orderID, "no ride started: \(log().suffix(3000))")
        let flags = ["--data-dir", "\(scratch)/data", "--from", "spans", "--json"]
        var trace = try await runCommand(Binaries.ridectl, ["trace", id] + flags)
        func steps() -> [JSONValue] { (try? JSONCoding.decode(JSONValue.self, from: Array(trace.stdout.utf8)))?["steps"]?.arrayValue ?? [] }
        func step(_ status: String) -> JSONValue? { steps().first { $0["status"] == .string(status) } }
        let shown = ContinuousClock.now + .seconds(120)
        // Each process's exporter sends in batches, on its own schedule: wait for the broker's span
        // of the accept, the reactor's of PICKING_UP and trips' too.
        while !(step("ACCEPTED")?["hops"]?["broker_queue_ms"] != nil && step("PICKING_UP")?["hops"]?["bus_ms"] != nil
            && trace.stdout.contains("trip.created")), ContinuousClock.now < shown
        {
            try await Task.sleep(for: .seconds(2))
            trace = try await runCommand(Binaries.ridectl, ["trace", id] + flags)
        }
        #expect(trace.status == 0, "\(trace.stderr)")
        let steps = steps()
        #expect(step("NEW")?["service"] == "ride-orders", "\(trace.stdout)")
        #expect(
            step("ACCEPTED")?["hops"]?["broker_queue_ms"]?.numberValue != nil, "a driver's accept went through the broker: \(trace.stdout)")
        #expect(step("ACCEPTED")?["hops"]?["database_commit_ms"]?.numberValue != nil, "\(trace.stdout)")
        #expect(step("PICKING_UP")?["hops"]?["bus_ms"]?.numberValue != nil, "the reactor took ACCEPTED from the bus: \(trace.stdout)")
        #expect(steps.contains { $0["label"] == "trip.created" && $0["service"] == "ride-trips" }, "\(trace.stdout)")
        supervisor.signal("up", SIGINT)
        #expect(await supervisor.waitForExit("up", timeout: .seconds(30)) == 0)
        try? FileManager.default.removeItem(atPath: scratch)
    }
}
