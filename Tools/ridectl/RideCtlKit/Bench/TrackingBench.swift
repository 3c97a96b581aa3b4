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
        let platform = try await BenchPlatform.start(bin: bin.path, name: "bench-ingest")
        let delivered = EventCounter(endpoint: platform.egress, prefix: Events.deviceLocation.topic)
        defer { delivered.stop() }
        try await platform.report(
            BenchTable(
                title:
                    "ridectl bench ingest — \(ProcessInfo.processInfo.activeProcessorCount) cores, \(devices) devices, \(rate) locations/s offered, \(seconds) s"
            ),
            json: format.json
        ) { table in
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
        let platform = try await BenchPlatform.start(bin: bin.path, name: "bench-nearby")
        try await platform.report(
            BenchTable(
                title:
                    "ridectl bench nearby — \(ProcessInfo.processInfo.activeProcessorCount) cores, \(drivers) drivers, \(ingestRate) loc/s streaming, radius \(Int(radius)) m, limit 10, available only"
            ), json: format.json
        ) { table in
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

struct BenchMemoryCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "memory", abstract: "ride-tracking's resident memory as devices are added (100 000, then 1 000 000).")

    @Option(help: "Device counts to measure at, comma-separated.") var steps = "100000,1000000"
    @OptionGroup var bin: BinDirectoryOption

    @OptionGroup var format: BenchFormat

    func run() async throws {
        let counts = steps.split(separator: ",").compactMap { Int($0) }
        guard !counts.isEmpty, counts == counts.sorted() else { throw ValidationError("--steps must be increasing numbers") }
        let platform = try await BenchPlatform.start(bin: bin.path, name: "bench-memory")
        try await platform.report(
            BenchTable(title: "ridectl bench memory — ride-tracking resident memory (devices with a location, indexed and stored)"),
            json: format.json
        ) {
            table in
            let empty = try await platform.trackingMetrics()["process_resident_memory_bytes"] ?? 0
            table.add("0 devices", String(format: "%.0f MB", empty / 1_048_576), "reported")
            var loaded = 0
            for count in counts {
                Output.err("loading up to \(count) devices…\n")
                try await DriverLoad.load(drivers: count - loaded, first: loaded, broker: platform.broker)
                loaded = count
                let resident = try await platform.trackingMetrics()["process_resident_memory_bytes"] ?? 0
                table.add(
                    "\(count) devices",
                    String(format: "%.0f MB (%.0f bytes per device)", resident / 1_048_576, (resident - empty) / Double(count)), "reported")
            }
        }
    }
}

/// Counts events on a topic prefix with a raw SUB socket on a thread of its own (no decoding: this
/// measures delivery, not JSON).
final class EventCounter: Sendable {
    private final class Count: Sendable { let value = Atomic<UInt64>(0) }
    private let counter = Count()
    private let stopFlag = StopFlag()
    private let thread: OwnedThread

    init(endpoint: String, prefix: String) {
        let (counter, stopFlag) = (self.counter, self.stopFlag)
        thread = OwnedThread(name: "bench-counter") {
            guard let socket = try? Socket(.sub) else { return }
            try? socket.setReceiveHighWaterMark(0)
            try? socket.setReceiveTimeout(milliseconds: 100)
            try? socket.subscribe(prefix)
            try? socket.connect(endpoint)
            while !stopFlag.isRequested {
                if (try? socket.receive()) != nil { counter.value.add(1, ordering: .relaxed) }
            }
            socket.close()
        }
    }

    var count: UInt64 { counter.value.load(ordering: .relaxed) }

    func stop() {
        stopFlag.request()
        thread.joinBlocking()
    }
}

/// Puts drivers in the index through `tracking.ingest` (one location each, 80% available).
enum DriverLoad {
    static func load(drivers: Int, first: Int = 0, broker: String) async throws {
        var options = MDPClient.Options()
        options.timeout = .seconds(30)
        let client = try await ServiceClient(broker: broker, options: options, logger: CLILogging.logger)
        let origin = GeoPoint(latitude: 47.8359, longitude: 35.1146)
        let now = Date()
        try await withThrowingTaskGroup(of: Void.self) { group in
            var started = 0
            func launch() {
                let index = first + started
                started += 1
                group.addTask {
                    var generator = SystemRandomNumberGenerator()
                    let point = origin.destination(
                        bearing: Double.random(in: 0..<360, using: &generator), distance: Double.random(in: 0...10_000, using: &generator))
                    let batch = IngestBatch(
                        publishableKey: "pk_dev_ridesharing", deviceID: "driver-\(index)", batchID: 1,
                        device: DeviceIntents(name: "Driver \(index)", tracking: true, available: index % 5 != 0, changedAt: now),
                        locations: [DeviceLocation(latitude: point.latitude, longitude: point.longitude, recordedAt: now, accuracy: 5)])
                    let reply = try await client.callRaw(Ops.Tracking.ingest, json: JSONCoding.encode(batch))
                    if reply.status != 200 {
                        throw ConfigurationError("ingest failed: \(reply.status) \(String(decoding: reply.json, as: UTF8.self))")
                    }
                }
            }
            for _ in 0..<min(512, drivers) { launch() }
            while try await group.next() != nil {
                if started < drivers { launch() }
            }
        }
        await client.close()
    }
}

/// Nearby queries from one client with `inflight` outstanding.
enum NearbyLoad {
    static func run(broker: String, seconds: Double, inflight: Int, radius: Double) async throws -> (Percentiles, Int, Double) {
        var options = MDPClient.Options()
        options.timeout = .seconds(10)
        let client = try await ServiceClient(broker: broker, options: options, logger: CLILogging.logger)
        let origin = GeoPoint(latitude: 47.8359, longitude: 35.1146)
        let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
        let start = ContinuousClock.now
        let all = try await withThrowingTaskGroup(of: [Double].self) { group in
            for _ in 0..<inflight {
                group.addTask {
                    var local: [Double] = []
                    var generator = SystemRandomNumberGenerator()
                    while ContinuousClock.now < deadline {
                        let center = origin.destination(
                            bearing: Double.random(in: 0..<360, using: &generator), distance: Double.random(in: 0...9000, using: &generator)
                        )
                        let query = NearbyQuery(location: GeoJSONPoint(center), radius: radius, limit: 10, availableOnly: true)
                        let params = try JSONCoding.encode(query)
                        let began = MonotonicClock.nanoseconds()
                        let reply = try await client.callRaw(Ops.Tracking.nearby, json: params)
                        local.append(Double(MonotonicClock.nanoseconds() - began) / 1000)
                        if reply.status != 200 { throw ConfigurationError("nearby failed: \(reply.status)") }
                    }
                    return local
                }
            }
            return try await group.reduce(into: [Double]()) { $0.append(contentsOf: $1) }
        }
        let elapsed = Double((ContinuousClock.now - start).milliseconds) / 1000
        await client.close()
        return (Percentiles(all), all.count, elapsed)
    }
}
