import Bus
import Foundation
import Geo
import Logging
import RideModels
import ServiceKit
import Testing
import TrackingSDK

/// A real `ride-tracking` beside a `TestBus`, on free ports, with its data in the test's directory.
struct TestTracking: Sendable {
    let bus: TestBus
    let ingestPort: Int
    let httpPort: Int
    let name: String

    var ingest: String { "tcp://127.0.0.1:\(ingestPort)" }
    var healthURL: String { "http://127.0.0.1:\(httpPort)/health" }
    var metricsURL: String { "http://127.0.0.1:\(httpPort)/metrics" }
    var dataDirectory: String { "\(bus.scratch)/\(name)-data" }
    var log: String { (try? String(contentsOfFile: bus.supervisor.logPath(of: name)!, encoding: .utf8)) ?? "" }

    static let publishableKey = "pk_test"

    static func start(on bus: TestBus, name: String = "tracking", inactiveAfterSeconds: Int = 2) async throws -> TestTracking {
        let tracking = TestTracking(bus: bus, ingestPort: try FreePort.next(), httpPort: try FreePort.next(), name: name)
        try await tracking.startProcess(inactiveAfterSeconds: inactiveAfterSeconds)
        return tracking
    }

    func startProcess(inactiveAfterSeconds: Int = 2) async throws {
        try bus.supervisor.start(name: name, executable: "\(Binaries.directory)/ride-tracking", arguments: [
            "--pub", bus.ingress, "--sub", bus.egress, "--broker", bus.broker, "--ingest", ingest,
            "--http", "127.0.0.1:\(httpPort)", "--data-dir", dataDirectory, "--publishable-keys", Self.publishableKey,
            "--inactive-after-s", "\(inactiveAfterSeconds)", "--log-level", "debug",
        ])
        guard await waitUntilHealthy(healthURL, timeout: .seconds(30), stillRunning: { bus.supervisor.isRunning(name) }) else {
            throw TestFailure("ride-tracking did not become healthy; log:\n\(log)")
        }
        try await bus.waitForWorkers(BusContract.Service.tracking)
    }

    /// An SDK configuration pointing at this tracking service.
    func sdkConfiguration(batchInterval: Duration = .milliseconds(200), samplingInterval: Duration = .milliseconds(100)) -> SDKConfiguration {
        var configuration = SDKConfiguration(publishableKey: Self.publishableKey)
        configuration.endpoint = ingest
        configuration.allowMockLocations = true
        configuration.batchInterval = batchInterval
        configuration.samplingInterval = samplingInterval
        configuration.acknowledgementTimeout = .milliseconds(500)
        return configuration
    }

    func call<Result: Decodable>(_ op: String, _ params: some Encodable & Sendable, as: Result.Type = Result.self) async throws -> Result {
        let client = try await bus.client(timeout: .seconds(3))
        defer { Task { await client.close() } }
        return try await client.call(BusContract.Service.tracking, op, params, as: Result.self)
    }

    func callRaw(_ op: String, json: String) async throws -> ServiceReply {
        let client = try await bus.client(timeout: .seconds(3))
        defer { Task { await client.close() } }
        return try await client.callRaw(BusContract.Service.tracking, op, json: Array(json.utf8))
    }
}

/// Polls `condition` until true, up to `timeout`. Readiness is asked for, not slept for.
func eventually(_ what: String, timeout: Duration = .seconds(15), _ condition: @Sendable () async throws -> Bool) async throws {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if try await condition() { return }
        try await Task.sleep(for: .milliseconds(50))
    }
    throw TestFailure("timed out after \(timeout) waiting until \(what)")
}
