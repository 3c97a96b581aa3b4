import ArgumentParser
import Bus
import Foundation
import Geo
import PlatformLauncher
import RideContract
import RideModels
import RoadServers
import Roads
import ServiceKit
import SettingsKit
import Synchronization

extension BenchPlatform {
    /// Starts a service of the lifecycle (users, trips, orders) beside the bus and tracking.
    func startService(_ executable: String, _ extra: [String] = []) async throws {
        let process = PlatformCommands.service(
            executable, name: executable, binDirectory: bin, bus: BusEndpoints(ingress: ingress, egress: egress, broker: broker),
            http: "127.0.0.1:\(try FreePort.next())", dataDirectory: "\(logs)/data", extra: ["--log-level", "warning"] + extra)
        let failures = try await supervisor.launch([process])
        guard failures.isEmpty else { throw ConfigurationError(failures.joined(separator: "; ")) }
    }
}

/// `ridectl bench lifecycle`: rides through all nine steps, many at once, against the real
/// services; the cars "teleport" (one fix at the pickup, one at the dropoff), so what is measured
/// is the platform, not driving.
struct BenchLifecycleCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "lifecycle",
        abstract: "Reaction latency of the orders service and completed rides per second, with many concurrent rides.",
        discussion: """
            Starts the bus, users, tracking, trips and orders; registers one rider and one driver \
            per lane, each lane in its own part of the map (so dispatch offers the lane's ride to \
            its driver); then every lane books, accepts, arrives, starts, arrives and ends rides \
            in a loop. Reaction latency is measured as an outside subscriber sees it: a status \
            (or a trip's arrival) received → the reactor's next status received. Rides per \
            second and each process's CPU per ride (from /proc) are measured from a quarter of \
            the run to its end, past the start when every lane books at once.
            """)

    @Option(help: "Rides in flight at once (one rider and one driver each).") var concurrent = 1000
    @Option(help: "Seconds of rides measured.") var seconds = 20.0
    @OptionGroup var bin: BinDirectoryOption

    @Option(
        help:
            "Where the lanes are: grid (each 5 km from the next: no road data, straight-line estimates) or helsinki (on the built-in road graph, at most 40 lanes: routes along the streets)"
    )
    var city = "grid"
    @Option(
        help:
            "ride-trips' and ride-orders' --routes (embedded, straight, …): compare CPU per ride with and without routing on --city helsinki"
    )
    var routes = "embedded"

    @OptionGroup var format: BenchFormat

    func validate() throws {
        guard (1...5000).contains(concurrent) else { throw ValidationError("--concurrent must be from 1 to 5000") }
        guard ["grid", "helsinki"].contains(city) else { throw ValidationError("--city must be grid or helsinki, got \(city.prefix(40))") }
        guard city == "grid" || concurrent <= LifecycleLanes.helsinkiLanes else {
            throw ValidationError("--city helsinki has room for \(LifecycleLanes.helsinkiLanes) lanes (--concurrent), got \(concurrent)")
        }
        do { _ = try RouteSource(parsing: routes) } catch { throw ValidationError("--routes: \(error.message)") }
        guard seconds > 0 else { throw ValidationError("--seconds must be positive") }
    }

    func run() async throws {
        try await BenchPlatform.measure(
            bench: "lifecycle", "\(concurrent) concurrent rides, \(Int(seconds)) s, \(city), routes \(routes)", bin: bin.path,
            json: format.json
        ) { platform, table in
            try await platform.startService("ride-users", ["--password-rounds", "1000"])
            try await platform.startService("ride-trips", ["--routes", routes])
            try await platform.startService("ride-orders", ["--offer-timeout-s", "3600", "--concurrency", "32", "--routes", routes])
            var options = MDPClient.Options()
            options.timeout = .seconds(30)
            let client = try await ServiceClient(broker: platform.broker, options: options, logger: CLILogging.logger)
            let lanes = try await LifecycleLanes.prepare(
                count: concurrent, client: client, places: city == "helsinki" ? LifecycleLanes.helsinkiPlaces() : nil)
            let subscriber = try await EventSubscriber<LifecycleEvent>(
                endpoint: platform.egress, prefixes: [Events.orderStatus.topic, Events.tripDestinationArrival.topic],
                logger: CLILogging.logger)
            let watch = RideWatch()
            let consumer = Task {
                for await batch in subscriber.deliveries {
                    var events: [ReceivedEvent<LifecycleEvent>] = []
                    for case .event(let received) in batch { events.append(received) }
                    await watch.saw(events)  // one hop onto the actor per batch
                }
            }
            let expiry = Task {
                while !Task.isCancelled {
                    try? await Task.sleep(for: .seconds(1))
                    await watch.expire()
                }
            }
            Output.err("riding for \(seconds) s with \(concurrent) rides at once…\n")
            let started = ContinuousClock.now
            let deadline = started + .milliseconds(Int(seconds * 1000))
            // Throughput and CPU are measured in a steady window: after the first quarter (all
            // lanes book at once, so no ride completes for a while) and up to the deadline (after
            // it the lanes drain and fewer rides are in flight).
            let measuredFrom = started + .milliseconds(Int(seconds * 250))
            let processes = Dictionary(
                uniqueKeysWithValues: ["ride-bus", "ride-tracking", "ride-users", "ride-trips", "ride-orders"]
                    .compactMap { name in platform.supervisor.pid(of: name).map { (name, $0) } } + [("ridectl (this benchmark)", getpid())])
            let window = Task { () -> (from: ContinuousClock.Instant, to: ContinuousClock.Instant, cpu: CPUTimes) in
                try? await Task.sleep(until: measuredFrom)
                let (from, before) = (ContinuousClock.now, CPUTimes.now(processes))
                try? await Task.sleep(until: deadline)
                return (from, ContinuousClock.now, CPUTimes.now(processes).since(before))
            }
            let outcome = await withTaskGroup(of: LifecycleLane.Rides.self) { group in
                for lane in lanes {
                    group.addTask { await lane.ride(until: deadline, client: client, watch: watch) }
                }
                var total = LifecycleLane.Rides()
                for await result in group {
                    total.completedAt += result.completedAt
                    total.stuck += result.stuck
                }
                return total
            }
            let elapsed = Double((ContinuousClock.now - started).milliseconds) / 1000
            let measured = await window.value
            consumer.cancel()
            expiry.cancel()
            await watch.expire(all: true)
            await subscriber.close()
            await client.close()
            let latencies = await watch.latencies
            let all = Percentiles(latencies.values.flatMap { $0 })
            // At least a millisecond: a sampler woken after the deadline (a machine stalled for seconds) must not divide by zero.
            let windowSeconds = max(Double((measured.to - measured.from).milliseconds) / 1000, 0.001)
            let inWindow = outcome.completedAt.filter { $0 >= measured.from && $0 <= measured.to }.count
            let steadyRate = Double(inWindow) / windowSeconds
            table.add("rides completed", "\(outcome.completedAt.count) in \(String(format: "%.1f", elapsed)) s", "reported")
            table.add(
                "  per second, start to the last ride", BenchTable.rate(Double(outcome.completedAt.count) / elapsed, "rides/s"), "reported")
            table.add(
                String(
                    format: "completed rides per second, %.0f–%.0f s", Double((measured.from - started).milliseconds) / 1000,
                    Double((measured.to - started).milliseconds) / 1000),
                BenchTable.rate(steadyRate, "rides/s"), "≥ 500 rides/s", met: steadyRate >= 500)
            let cpu = measured.cpu
            let cpuPerRide = { (seconds: Double) in inWindow > 0 ? String(format: "%.2f ms", seconds * 1000 / Double(inWindow)) : "–" }
            table.add(
                "CPU per ride in that window, all processes", cpuPerRide(cpu.processes.values.reduce(0, +)),
                String(format: "machine %.0f%% busy", cpu.machineTotal > 0 ? cpu.machineBusy / cpu.machineTotal * 100 : 0))
            for (name, seconds) in cpu.processes.sorted(by: { $0.value > $1.value }) {
                table.add("  \(name)", cpuPerRide(seconds), String(format: "%.0f%% of a core", seconds / windowSeconds * 100))
            }
            table.add("rides stuck (a step not reached within 30 s)", "\(outcome.stuck)", "0", met: outcome.stuck == 0)
            table.add(
                "reaction latency, all reactions, p50 / p99", String(format: "%.1f ms / %.1f ms", all.value(50), all.value(99)),
                "p99 ≤ 5 ms",
                met: all.value(99) <= 5)
            for (reaction, samples) in latencies.sorted(by: { $0.key < $1.key }) {
                let p = Percentiles(samples)
                table.add(
                    "  \(reaction), p50 / p99", String(format: "%.1f ms / %.1f ms", p.value(50), p.value(99)), "\(samples.count) samples")
            }
        }
    }
}

/// One rider and one driver, alone in their square of the map.
struct LifecycleLane: Sendable {
    let rider: String
    let driver: String
    let device: String
    let pickup: GeoPoint
    let dropoff: GeoPoint
    let clock: FixTimes
    /// On the road graph, where the driver goes back to before each booking (lanes are close
    /// together there: from another lane's dropoff the driver would not be the nearest).
    var home: GeoPoint?

    /// What a lane did: when each of its rides completed, and whether one got stuck.
    struct Rides: Sendable {
        var completedAt: [ContinuousClock.Instant] = []
        var stuck = 0
    }

    /// Rides until the deadline (the last ride started before it is finished).
    func ride(until deadline: ContinuousClock.Instant, client: ServiceClient, watch: RideWatch) async -> Rides {
        var rides = Rides()
        while ContinuousClock.now < deadline {
            guard await rideOnce(client: client, watch: watch) else {
                rides.stuck = 1
                return rides
            }
            rides.completedAt.append(ContinuousClock.now)
        }
        return rides
    }

    /// One ride through every step, the driver taking `pickupSeconds` to the pickup and
    /// `rideSeconds` to the drop-off (0: a fix there at once); false when a step was not reached (stuck).
    func rideOnce(pickupSeconds: Double = 0, rideSeconds: Double = 0, client: ServiceClient, watch: RideWatch) async -> Bool {
        do {
            if let home { try await report(at: home, client: client) }
            let order = try await client.call(
                Ops.Orders.create,
                CreateOrderParams(
                    caller: .rider(rider), pickup: Place(latitude: pickup.latitude, longitude: pickup.longitude),
                    dropoff: Place(latitude: dropoff.latitude, longitude: dropoff.longitude)))
            let params = OrderParams(caller: .driver(driver), id: order.id)
            _ = try await client.call(Ops.Orders.accept, params)
            try await watch.wait(order.id, .pickingUp)
            if pickupSeconds > 0 { try await Task.sleep(for: .milliseconds(Int(pickupSeconds * 1000))) }
            try await report(at: pickup, client: client)
            try await watch.wait(order.id, .reachedPickup)
            _ = try await client.call(Ops.Orders.startRide, params)
            try await watch.wait(order.id, .droppingOff)
            if rideSeconds > 0 { try await Task.sleep(for: .milliseconds(Int(rideSeconds * 1000))) }
            try await report(at: dropoff, client: client)
            try await watch.wait(order.id, .reachedDropoff)
            _ = try await client.call(Ops.Orders.endRide, params)
            return true
        } catch {
            return false
        }
    }

    func report(at point: GeoPoint, client: ServiceClient) async throws {
        let fix = DeviceLocation(latitude: point.latitude, longitude: point.longitude, recordedAt: clock.next(), accuracy: 5, speed: 10)
        _ = try await client.call(
            Ops.Tracking.ingest,
            IngestBatch(publishableKey: "pk_dev_ridesharing", deviceID: device, batchID: 1, locations: [fix]))
    }
}

/// A device's fix times: one second apart, starting an hour ago (tracking publishes only newer ones).
final class FixTimes: Sendable {
    private let upcoming = Mutex(Date().addingTimeInterval(-3600))
    func next() -> Date {
        upcoming.withLock { value in
            defer { value.addTimeInterval(1) }
            return value
        }
    }
}

enum LifecycleLanes {
    /// Lanes on the Helsinki graph: pickups at least this far apart, so each is nearest its own driver.
    static let helsinkiLanes = 40

    /// (pickup, dropoff) pairs on the built-in road graph: pickups at nodes 120 m or more apart,
    /// each dropoff the node nearest 800 m north-east or south-west of its pickup.
    static func helsinkiPlaces() -> [(GeoPoint, GeoPoint)] {
        guard let graph = try? RoadGraph.helsinki() else { return [] }
        var pickups: [GeoPoint] = []
        for point in graph.points.sorted(by: { ($0.latitude, $0.longitude) < ($1.latitude, $1.longitude) })
        where pickups.allSatisfy({ $0.distance(to: point) >= 120 }) {
            pickups.append(point)
        }
        return pickups.prefix(helsinkiLanes).enumerated().map { index, pickup in
            let target = pickup.destination(bearing: index % 2 == 0 ? 45 : 225, distance: 800)
            return (pickup, graph.points.min { $0.distance(to: target) < $1.distance(to: target) } ?? target)
        }
    }

    /// Registers the riders and drivers and puts each driver in its lane, 5 km from the next (or,
    /// with `places`, at its pickup on the road graph).
    static func prepare(count: Int, client: ServiceClient, places: [(GeoPoint, GeoPoint)]? = nil) async throws -> [LifecycleLane] {
        if let places, places.count < count {
            throw ConfigurationError("the road graph has room for \(places.count) lanes, \(count) asked")
        }
        Output.err("registering \(count) riders and \(count) drivers…\n")
        let run = Int.random(in: 0..<100_000)
        let origin = GeoPoint(latitude: 47.0, longitude: 30.0)
        let side = Int(Double(count).squareRoot().rounded(.up))
        return try await withThrowingTaskGroup(of: LifecycleLane.self) { group in
            var lanes: [LifecycleLane] = []
            var next = 0
            func launch() {
                let index = next
                next += 1
                group.addTask {
                    let phone = { (role: Int) in "+39\(role)\(String(format: "%05d%05d", run, index))" }
                    let device = "bench-\(run)-\(index)"
                    let rider = try await client.call(
                        Ops.Users.register,
                        RegisterParams(role: .rider, name: "Rider \(index)", phoneNumber: phone(1), password: "bench-rider"))
                    let driver = try await client.call(
                        Ops.Users.register,
                        RegisterParams(
                            role: .driver, name: "Driver \(index)", phoneNumber: phone(2), password: "bench-driver",
                            deviceID: device, car: Car(model: "Bench", licensePlate: "B \(index)")))
                    let onGrid = origin.destination(bearing: 90, distance: Double(index % side) * 5000).destination(
                        bearing: 0, distance: Double(index / side) * 5000)
                    let (pickup, dropoff) = places?[index] ?? (onGrid, onGrid.destination(bearing: 0, distance: 1000))
                    // On the roads: 50 m away, outside the pickup's fence yet nearer than any other lane's driver.
                    let start = pickup.destination(bearing: 180, distance: places == nil ? 500 : 50)
                    let lane = LifecycleLane(
                        rider: rider.id, driver: driver.id, device: device, pickup: pickup, dropoff: dropoff, clock: FixTimes(),
                        home: places == nil ? nil : start)
                    _ = try await client.call(
                        Ops.Tracking.ingest,
                        IngestBatch(
                            publishableKey: "pk_dev_ridesharing", deviceID: device, batchID: 1,
                            device: DeviceIntents(
                                name: driver.name, metadata: ["user_id": .string(driver.id)], tracking: true, available: true,
                                changedAt: Date()),
                            locations: [
                                DeviceLocation(
                                    latitude: start.latitude, longitude: start.longitude, recordedAt: lane.clock.next(), accuracy: 5)
                            ]))
                    return lane
                }
            }
            for _ in 0..<min(64, count) { launch() }
            while let lane = try await group.next() {
                lanes.append(lane)
                if next < count { launch() }
            }
            return lanes
        }
    }
}

/// The statuses each order has reached (from the bus), waited for by the lanes, and the reactions' latencies.
///
/// A wait is one continuation with a deadline; `expire` (called once a second by the benchmark)
/// ends the overdue ones. A timer task per wait (four per ride) cost the benchmark's client more
/// CPU than the decoding of every event it follows, and that CPU is taken from the platform measured.
actor RideWatch {
    private struct Waiter {
        let status: OrderStatus
        let deadline: ContinuousClock.Instant
        let continuation: CheckedContinuation<Bool, Never>
    }
    private var reached: [String: Set<OrderStatus>] = [:]
    private var waiters: [String: [Waiter]] = [:]
    private var clock = ReactionClock()

    var latencies: [String: [Double]] { clock.latencies }

    func saw(_ events: [ReceivedEvent<LifecycleEvent>]) {
        for event in events { saw(event) }
    }

    private func saw(_ received: ReceivedEvent<LifecycleEvent>) {
        clock.saw(received)
        let event = received.event
        guard case .order(let change) = event.data else { return }
        let (id, status) = (change.order.id, change.order.status)
        if status == .completed || status == .cancelled {
            reached[id] = nil  // nothing waits for these; the lane's ride is over
        } else {
            reached[id, default: []].insert(status)
        }
        end(waiters[id] ?? [], of: id, arrived: true) { $0.status == status }
    }

    /// Returns once `order` has reached `status`; throws after 30 s.
    func wait(_ order: String, _ status: OrderStatus) async throws {
        if reached[order]?.contains(status) == true { return }
        let deadline = ContinuousClock.now + .seconds(30)
        let arrived = await withCheckedContinuation {
            waiters[order, default: []].append(Waiter(status: status, deadline: deadline, continuation: $0))
        }
        if !arrived { throw ConfigurationError("order \(order) did not reach \(status.rawValue) within 30 s") }
    }

    /// Ends the waits whose deadline has passed (they throw), or every wait when `all`.
    func expire(all: Bool = false) {
        let now = ContinuousClock.now
        for (order, waiting) in waiters {
            end(waiting, of: order, arrived: false) { all || $0.deadline <= now }
        }
    }

    /// Resumes the waits of `order` that `ending` picks (with `arrived`) and keeps the others.
    private func end(_ waiting: [Waiter], of order: String, arrived: Bool, _ ending: (Waiter) -> Bool) {
        var rest: [Waiter] = []
        for waiter in waiting {
            if ending(waiter) { waiter.continuation.resume(returning: arrived) } else { rest.append(waiter) }
        }
        if rest.count != waiting.count { waiters[order] = rest.isEmpty ? nil : rest }
    }
}
