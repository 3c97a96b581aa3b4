import Bus
import Foundation
import Geo
import Logging
import PlatformLauncher
import RideModels
import ServiceKit
import Testing
import TrackingSDK

/// A real `ride-tracking` beside a `TestBus`, on free ports, with its data in the test's directory.
struct TestTracking: Sendable {
    let process: TestService
    let ingestPort: Int
    /// This process's shard, when sharded.
    var shard: DeviceShard? = nil

    var bus: TestBus { process.bus }
    var name: String { process.name }
    var ingest: String { "tcp://\(process.host.address):\(ingestPort)" }
    var healthURL: String { "http://\(process.host.address):\(process.httpPort)/health" }
    var metricsURL: String { "http://\(process.host.address):\(process.httpPort)/metrics" }
    var log: String { process.log }

    static let publishableKey = "pk_test"

    /// - Parameters:
    ///   - shard: `--shard K/N`; the process is ready once its peer service `tracking.shard.K` is too.
    ///   - dataOwner: share that process's data directory (shards of one platform do).
    ///   - deviceCredentials: phones on the ingest socket need their driver's device credential (checked
    ///     with users, which must run); off, the publishable key is enough (tests of tracking alone).
    static func start(
        on bus: TestBus, name: String = "tracking", inactiveAfterSeconds: Int = 2, shard: DeviceShard? = nil,
        dataOwner: String? = nil, deviceCredentials: Bool = false, arguments: [String] = []
    ) async throws -> TestTracking {
        let ingestPort = try FreePort.next()
        let process = TestService(
            bus: bus, name: name, service: BusContract.Service.tracking, executable: "ride-tracking",
            arguments: PlatformCommands.trackingFlags(
                ingest: "tcp://\(bus.host(of: dataOwner ?? name).address):\(ingestPort)", shard: shard.map { "\($0)" })
                + [
                    "--publishable-keys", publishableKey, "--inactive-after-s", "\(inactiveAfterSeconds)", "--device-credentials",
                    deviceCredentials ? "required" : "off",
                ]
                + arguments, httpPort: try FreePort.next(), dataOwner: dataOwner)
        let tracking = TestTracking(process: process, ingestPort: ingestPort, shard: shard)
        try await tracking.startProcess()
        return tracking
    }

    /// Starts the process again (after a kill), with the same settings and data.
    func startProcess() async throws {
        try await process.startProcess()
        if let shard { try await bus.waitForWorkers(BusContract.Service.trackingShard(shard.index)) }
    }

    /// An SDK configuration pointing at this tracking service.
    func sdkConfiguration(batchInterval: Duration = .milliseconds(200), samplingInterval: Duration = .milliseconds(100)) -> SDKConfiguration
    {
        Self.sdkConfiguration(endpoints: [ingest], batchInterval: batchInterval, samplingInterval: samplingInterval)
    }

    /// An SDK configuration pointing at tracking's shards (their ingest endpoints in shard order).
    static func sdkConfiguration(
        endpoints: [String], batchInterval: Duration = .milliseconds(200),
        samplingInterval: Duration = .milliseconds(100)
    ) -> SDKConfiguration {
        var configuration = SDKConfiguration(publishableKey: Self.publishableKey)
        configuration.endpoints = endpoints
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
