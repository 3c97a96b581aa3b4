import Foundation
import PlatformLauncher
import Testing
import Wire

/// `/livez` and `/readyz`: a service whose bus is not there yet runs (live) but is not ready, and
/// says which of its needs is missing; once the bus is up, it becomes ready by itself.
@Suite(.timeLimit(.minutes(2))) struct ProbeTests {
    @Test func aServiceIsLiveAtOnceAndReadyOnceItsBusIsThere() async throws {
        let scratch = try makeScratchDirectory("probes")
        let supervisor = ProcessSupervisor(output: .files(directory: scratch))
        defer {
            supervisor.killAll()
            try? FileManager.default.removeItem(atPath: scratch)
        }
        let (pub, sub, broker, busHTTP, http) = (
            try FreePort.next(), try FreePort.next(), try FreePort.next(), try FreePort.next(), try FreePort.next()
        )
        let endpoints = BusEndpoints(
            ingress: "tcp://127.0.0.1:\(pub)", egress: "tcp://127.0.0.1:\(sub)", broker: "tcp://127.0.0.1:\(broker)")
        let orders = PlatformCommands.service(
            "ride-orders", name: "orders", binDirectory: Binaries.directory, bus: endpoints, http: "127.0.0.1:\(http)",
            dataDirectory: "\(scratch)/data")
        let failures = try await supervisor.launch([orders])
        #expect(failures.isEmpty, "\(failures)")

        let live = try await HTTPProbe.get("http://127.0.0.1:\(http)/livez")
        #expect(live.status == 200 && live.text.contains(#""status":"live""#), "\(live.text)")
        // Its database is there at once; the broker and the bus are not.
        try await eventually("the database check passes") { try await Self.readiness(http).checks["database"] == "ok" }
        let waiting = try await Self.readiness(http)
        #expect(waiting.status == 503 && waiting.state == "not_ready", "\(waiting)")
        #expect(
            waiting.checks["broker"]?.contains("orders not registered with the broker at tcp://127.0.0.1:\(broker)") == true, "\(waiting)")
        #expect(waiting.checks["bus"]?.contains("not connected to the bus at tcp://127.0.0.1:\(sub)") == true, "\(waiting)")

        let bus = PlatformCommands.bus(
            binDirectory: Binaries.directory, pub: endpoints.ingress, sub: "tcp://127.0.0.1:\(sub)", broker: endpoints.broker,
            http: "127.0.0.1:\(busHTTP)")
        #expect(try await supervisor.launch([bus]).isEmpty)
        try await eventually("orders is ready once the bus is up", timeout: .seconds(30)) { try await Self.readiness(http).status == 200 }
        let ready = try await Self.readiness(http)
        #expect(ready.state == "ready" && ready.checks == ["database": "ok", "broker": "ok", "bus": "ok"], "\(ready)")
        #expect(try await HTTPProbe.get("http://127.0.0.1:\(busHTTP)/readyz").status == 200, "the bus itself has nothing to wait for")
    }

    static func readiness(_ port: Int) async throws -> (status: Int, state: String, checks: [String: String]) {
        let response = try await HTTPProbe.get("http://127.0.0.1:\(port)/readyz")
        let body = try JSONCoding.decode(JSONValue.self, from: Array(response.body))
        var checks: [String: String] = [:]
        if case .object(let members)? = body["checks"] { for (key, value) in members { checks[key] = value.stringValue } }
        return (response.status, body["status"]?.stringValue ?? "", checks)
    }
}
