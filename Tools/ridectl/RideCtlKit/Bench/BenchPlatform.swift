import ArgumentParser
import Bus
import Foundation
import Geo
import PlatformLauncher
import RideContract
import RideModels
import ServiceKit
import SettingsKit
import Synchronization
import Wire
import ZeroMQ

/// A bus and a tracking service as real processes on free ports, for the tracking benchmarks.
struct BenchPlatform {
    let supervisor: ProcessSupervisor
    let logs: String
    let bin: String
    let ingress: String
    let egress: String
    let broker: String
    let ingest: String
    let trackingHTTP: Int

    static func start(bin: String, name: String, inactiveAfter: Int = 3600) async throws -> BenchPlatform {
        let logs = FileManager.default.temporaryDirectory.appendingPathComponent("ridectl-\(name)-\(getpid())").path
        try FileManager.default.createDirectory(atPath: "\(logs)/data", withIntermediateDirectories: true)
        let supervisor = ProcessSupervisor(output: .files(directory: logs))
        let (pub, sub, brokerPort, busHTTP, ingestPort, trackingHTTP) = (
            try FreePort.next(), try FreePort.next(), try FreePort.next(),
            try FreePort.next(), try FreePort.next(), try FreePort.next()
        )
        let brokerIPC = "ipc://\(logs)/broker.sock"
        let platform = BenchPlatform(
            supervisor: supervisor, logs: logs, bin: bin, ingress: "tcp://127.0.0.1:\(pub)", egress: "tcp://127.0.0.1:\(sub)",
            broker: brokerIPC, ingest: "tcp://127.0.0.1:\(ingestPort)", trackingHTTP: trackingHTTP)
        Output.err("ridectl bench: logs of the processes in \(logs)/\n")
        let bus = BusEndpoints(ingress: platform.ingress, egress: platform.egress, broker: brokerIPC)
        let quiet = ["--log-level", "warning"]
        for (process, timeout) in [
            (
                PlatformCommands.bus(
                    name: "ride-bus", binDirectory: bin, pub: platform.ingress, sub: platform.egress,
                    broker: "tcp://127.0.0.1:\(brokerPort),\(brokerIPC)",
                    http: "127.0.0.1:\(busHTTP)", extra: quiet), Duration.seconds(20)
            ),
            (
                PlatformCommands.tracking(
                    name: "ride-tracking", binDirectory: bin, bus: bus, http: "127.0.0.1:\(trackingHTTP)", dataDirectory: "\(logs)/data",
                    ingest: platform.ingest,
                    // The load's devices belong to no driver (there is no users here): ingest without
                    // credentials. With them, a verified device costs one dictionary lookup per batch.
                    extra: ["--inactive-after-s", "\(inactiveAfter)", "--device-credentials", "off"] + quiet), .seconds(30)
            ),
        ] {
            let failures = try await supervisor.launch([process], timeout: timeout)
            guard failures.isEmpty else { throw ConfigurationError(failures.joined(separator: "; ")) }
        }
        return platform
    }

    /// The tracking service's metrics, by name (labels included).
    func trackingMetrics() async throws -> [String: Double] {
        let text = try await HTTPProbe.get("http://127.0.0.1:\(trackingHTTP)/metrics").text
        var values: [String: Double] = [:]
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            let parts = line.split(separator: " ")
            if parts.count == 2, let value = Double(parts[1]) { values[String(parts[0])] = value }
        }
        return values
    }

    /// Starts `processes` load generators sharing `devices` devices and `rate` locations per second,
    /// sending to the ingest, or the same fixes to the Redis at `redis` (HOST:PORT).
    func startDevices(devices: Int, rate: Int, seconds: Double, processes: Int, first: Int = 0, nice: Int32 = 10, redis: String? = nil)
        throws
    {
        for index in 0..<processes {
            let share = devices / processes
            try supervisor.start(
                name: "devices-\(redis == nil ? "" : "redis-")\(first)-\(index)", executable: "\(bin)/ridectl",
                arguments: [
                    "bench-devices", "--ingest", ingest, "--devices", "\(share)", "--first", "\(first + index * share)",
                    "--rate", "\(rate / processes)", "--seconds", "\(seconds)", "--nice", "\(nice)",
                ] + (redis.map { ["--redis", $0] } ?? []))
        }
    }

    func stop() async { await supervisor.stopAll(grace: .seconds(10)) }

    /// Fills `table` by measuring, stops the platform whatever happens, prints the table, and
    /// exits 1 when a target was missed.
    /// Starts the platform for `ridectl bench <bench>`, measures with `body`, stops it and prints
    /// the table (`BenchTable(bench:_:)`); the platform stops too when `body` throws.
    static func measure(
        bench: String, _ setup: String, bin: String, json: Bool, _ body: (BenchPlatform, inout BenchTable) async throws -> Void
    ) async throws {
        let platform = try await start(bin: bin, name: "bench-" + bench)
        try await platform.report(BenchTable(bench: bench, setup), json: json) { table in try await body(platform, &table) }
    }

    func report(_ table: BenchTable, json: Bool, _ measure: (inout BenchTable) async throws -> Void) async throws {
        var table = table
        do {
            try await measure(&table)
        } catch {
            await stop()
            throw error
        }
        await stop()
        try table.print(json: json)
    }
}
