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

struct BenchNearbyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "nearby",
        abstract: "Nearby queries over the broker with many drivers while locations stream in.",
        discussion: "Loads the drivers through the ingest op, streams locations from moving devices, and queries from one client.")

    @Option(help: "Drivers in the index.") var drivers = 100_000
    @Option(name: .customLong("ingest-rate"), help: "Locations per second streamed meanwhile.") var ingestRate = 50_000
    @Option(name: .customLong("moving-devices"), help: "Devices that stream those locations.") var movingDevices = 10_000
    @Option(help: "Seconds of queries.") var seconds = 10.0
    @Option(help: "Queries in flight at once, comma-separated for one phase each.") var inflight = "1,4,32"
    @Option(help: "Query radius in metres.") var radius = 2000.0
    @OptionGroup var bin: BinDirectoryOption

    @OptionGroup var format: BenchFormat

    func run() async throws {
        let phases = inflight.split(separator: ",").compactMap { Int($0.trimmingCharacters(in: .whitespaces)) }
        guard !phases.isEmpty, phases.allSatisfy({ $0 > 0 }) else {
            throw ValidationError("--inflight must be positive numbers, comma-separated (e.g. 1,32), not \"\(inflight)\"")
        }
        try await BenchPlatform.measure(
            bench: "nearby", "\(drivers) drivers, \(ingestRate) loc/s streaming, radius \(Int(radius)) m, limit 10, available only",
            bin: bin.path, json: format.json
        ) { platform, table in
            Output.err("loading \(drivers) drivers…\n")
            let loading = ContinuousClock.now
            try await DriverLoad.load(drivers: drivers, broker: platform.broker)
            let loadSeconds = Double((ContinuousClock.now - loading).milliseconds) / 1000
            table.add("drivers loaded through the ingest op", BenchTable.rate(Double(drivers) / loadSeconds, "drivers/s"), "reported")
            let memory = try await platform.trackingMetrics()["process_resident_memory_bytes"] ?? 0
            table.add("ride-tracking resident memory with \(drivers) drivers", String(format: "%.0f MB", memory / 1_048_576), "reported")

            try platform.startDevices(
                devices: movingDevices, rate: ingestRate, seconds: Double(phases.count) * (seconds + 1) + 5, processes: 2)
            try await Task.sleep(for: .seconds(2))
            var ours: [Int: (p99: Double, throughput: Double)] = [:]
            for phase in phases {
                let before = try await platform.trackingMetrics()
                Output.err("querying for \(seconds) s with \(phase) in flight…\n")
                let (latency, count, elapsed) = try await NearbyLoad.run(
                    broker: platform.broker, seconds: seconds, inflight: phase, radius: radius)
                let after = try await platform.trackingMetrics()
                let ingested =
                    ((after["ride_tracking_locations_accepted_total"] ?? 0) - (before["ride_tracking_locations_accepted_total"] ?? 0))
                    / elapsed
                let throughput = Double(count) / elapsed
                table.add(
                    "\(phase) in flight: nearby p50 / p99",
                    "\(BenchTable.micros(latency.value(50))) / \(BenchTable.micros(latency.value(99)))",
                    "p99 ≤ 0.9 ms", met: latency.value(99) <= 900)
                table.add(
                    "\(phase) in flight: queries answered", BenchTable.rate(throughput, "queries/s"), "≥ 10 000 queries/s",
                    met: throughput >= 10_000)
                table.add("\(phase) in flight: locations streaming meanwhile", BenchTable.rate(ingested, "loc/s"), "≈ \(ingestRate)")
                ours[phase] = (latency.value(99), throughput)
            }

            // The peer on the same load: the drivers, the streaming fixes and the queries, once the platform is stopped.
            await platform.stop()
            let ran = try await RedisPeer.run(logs: platform.logs) { redis in
                let origin = GeoPoint(latitude: 47.8359, longitude: 35.1146)
                Output.err("the same load on Redis \(redis.version): \(drivers) drivers, \(ingestRate) loc/s, GEOSEARCH…\n")
                try RedisNearbyLoad.load(drivers: drivers, address: redis.address, origin: origin)
                try platform.startDevices(
                    devices: movingDevices, rate: ingestRate, seconds: Double(phases.count) * (seconds + 1) + 5, processes: 2,
                    redis: redis.address)
                try await Task.sleep(for: .seconds(2))
                for phase in phases {
                    let (latency, count, elapsed) = try RedisNearbyLoad.run(
                        address: redis.address, seconds: seconds, inflight: phase, radius: radius, origin: origin)
                    let throughput = Double(count) / elapsed
                    table.add(
                        "Redis \(redis.version), \(phase) in flight: GEOSEARCH p50 / p99",
                        "\(BenchTable.micros(latency.value(50))) / \(BenchTable.micros(latency.value(99)))", "the peer, this run")
                    table.add("Redis, \(phase) in flight: queries answered", BenchTable.rate(throughput, "queries/s"), "the peer, this run")
                    if let mine = ours[phase] {
                        table.add(
                            "\(phase) in flight: ours ÷ Redis, queries / p99",
                            String(format: "%.2f× / %.2f×", mine.throughput / max(throughput, 1), mine.p99 / max(latency.value(99), 1)),
                            "reported")
                    }
                }
            }
            if !ran { table.add("Redis GEOSEARCH on the same load", RedisPeer.missing, "reported") }
        }
    }
}
