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

struct BenchIngestCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ingest",
        abstract: "Locations per second into ride-tracking: indexed, stored and published, from many devices.",
        discussion: "Devices stream over real sockets from separate load processes; the rates are read from ride-tracking's metrics.")

    @Option(help: "Simulated devices.") var devices = 10_000
    @Option(help: "Locations per second offered, all devices together.") var rate = 300_000
    @Option(help: "Seconds measured (after a warm-up of 3 s).") var seconds = 10.0
    @Option(help: "Load-generating processes (each device is a connection: descriptors per process are limited).") var processes = 2
    @OptionGroup var bin: BinDirectoryOption

    @OptionGroup var format: BenchFormat

    func run() async throws {
        try await BenchPlatform.measure(
            bench: "ingest", "\(devices) devices, \(rate) locations/s offered, \(seconds) s", bin: bin.path, json: format.json
        ) { platform, table in
            let delivered = EventCounter(endpoint: platform.egress, prefix: Events.deviceLocation.topic)
            defer { delivered.stop() }
            let warmUp = 3.0
            try platform.startDevices(devices: devices, rate: rate, seconds: warmUp + seconds + 1, processes: processes)
            Output.err("warming up for \(warmUp) s…\n")
            try await Task.sleep(for: .milliseconds(Int(warmUp * 1000)))
            let before = try await platform.trackingMetrics()
            let deliveredBefore = delivered.count
            let started = ContinuousClock.now
            Output.err("measuring for \(seconds) s…\n")
            try await Task.sleep(for: .milliseconds(Int(seconds * 1000)))
            let after = try await platform.trackingMetrics()
            let deliveredAfter = delivered.count
            let elapsed = Double((ContinuousClock.now - started).milliseconds) / 1000
            func perSecond(_ name: String) -> Double { ((after[name] ?? 0) - (before[name] ?? 0)) / elapsed }
            let accepted = perSecond("ride_tracking_locations_accepted_total")
            table.add("locations accepted into the index", BenchTable.rate(accepted, "loc/s"), "≥ 250 000 loc/s", met: accepted >= 250_000)
            table.add(
                "history written (SQLite, group commits)", BenchTable.rate(perSecond("ride_tracking_history_written_total"), "loc/s"),
                "keeps up")
            table.add(
                "device.location events published", BenchTable.rate(perSecond("ride_tracking_events_published_total"), "events/s"),
                "keeps up")
            table.add(
                "  delivered to a subscriber through ride-bus",
                BenchTable.rate(Double(deliveredAfter - deliveredBefore) / elapsed, "events/s"), "reported")
            table.add(
                "ride-tracking resident memory", String(format: "%.0f MB", (after["process_resident_memory_bytes"] ?? 0) / 1_048_576),
                "reported")
            let cpu = perSecond("process_cpu_seconds_total")
            table.add(
                "ride-tracking CPU", String(format: "%.0f%% of a core, %.1f µs per location", cpu * 100, cpu / max(accepted, 1) * 1e6),
                "reported")
            table.add(
                "devices known", String(Int(after["ride_tracking_devices"] ?? 0)), "= \(devices)",
                met: Int(after["ride_tracking_devices"] ?? 0) == devices)

            // The peer, on the same machine, the same load and the same fixes, once the platform is stopped.
            await platform.stop()
            let ran = try await RedisPeer.run(logs: platform.logs) { redis in
                Output.err("the same load into Redis \(redis.version) (pipelined GEOADDs), warming up for \(warmUp) s…\n")
                try platform.startDevices(
                    devices: devices, rate: rate, seconds: warmUp + seconds + 1, processes: processes, redis: redis.address)
                try await Task.sleep(for: .milliseconds(Int(warmUp * 1000)))
                let peerBefore = try redis.counters()
                let peerStarted = ContinuousClock.now
                try await Task.sleep(for: .milliseconds(Int(seconds * 1000)))
                let peerAfter = try redis.counters()
                let peerElapsed = Double((ContinuousClock.now - peerStarted).milliseconds) / 1000
                let perBatch = Double(max(1, rate / devices))
                let peerRate = (peerAfter.geoadds - peerBefore.geoadds) * perBatch / peerElapsed
                let peerCPU = (peerAfter.cpuSeconds - peerBefore.cpuSeconds) / peerElapsed
                table.add(
                    "Redis \(redis.version): the same fixes, GEOADD pipelined", BenchTable.rate(peerRate, "loc/s"), "the peer, this run")
                table.add(
                    "Redis CPU", String(format: "%.0f%% of a core, %.1f µs per location", peerCPU * 100, peerCPU / max(peerRate, 1) * 1e6),
                    "reported")
                table.add(
                    "accepted ÷ Redis (ours indexed, stored and published)", String(format: "%.2f×", accepted / max(peerRate, 1)),
                    "reported (≥ 1× for the index alone)")
            }
            if !ran { table.add("Redis GEOADD of the same fixes", RedisPeer.missing, "reported") }
        }
    }
}
