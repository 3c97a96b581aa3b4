import Bus
import Foundation
import RideContract
import RideModels
import ServiceKit

/// One `ridectl bench city` against a running platform: the lanes (riders and drivers who ride),
/// the events they wait for, and one step of load after another.
struct CityRun: Sendable {
    let platform: BenchPlatform
    let client: ServiceClient
    let plan: CityPlan
    let pool: LanePool
    let watch: RideWatch
    let subscriber: EventSubscriber<LifecycleEvent>
    let background: [Task<Void, Never>]

    static func start(platform: BenchPlatform, client: ServiceClient, lanes: [LifecycleLane], plan: CityPlan) async throws -> CityRun {
        let subscriber = try await EventSubscriber<LifecycleEvent>(
            endpoint: platform.egress, prefixes: [Events.orderStatus.topic, Events.tripDestinationArrival.topic], logger: CLILogging.logger)
        let watch = RideWatch()
        let consumer = Task {
            for await batch in subscriber.deliveries {
                var events: [ReceivedEvent<LifecycleEvent>] = []
                for case .event(let received) in batch { events.append(received) }
                await watch.saw(events)
            }
        }
        let expiry = Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: .seconds(1))
                await watch.expire()
            }
        }
        return CityRun(
            platform: platform, client: client, plan: plan, pool: LanePool(lanes), watch: watch, subscriber: subscriber,
            background: [consumer, expiry])
    }

    /// Runs `step` for `seconds`: its drivers' fixes from load processes, its bookings at a Poisson
    /// rate; returns once the rides it booked have finished (or got stuck).
    func step(_ step: CityPlan.Step, index: Int, seconds: Double) async throws -> CityStepResult {
        // The drivers who do not ride only stream fixes, from load processes (a process per 5,000).
        let streaming = max(0, step.drivers - plan.lanes)
        let processes = max(1, min(4, streaming / 5000))
        if streaming > 0 {
            try platform.startDevices(
                devices: streaming, rate: max(1, Int(Double(streaming) / plan.fixInterval)), seconds: 3600, processes: processes,
                first: index * 1_000_000)
        }
        let loadNames = (0..<processes).map { "devices-\(index * 1_000_000)-\($0)" }
        let before = await watch.latencies.mapValues(\.count)
        let cpuBefore = CPUTimes.now(pids(load: loadNames))
        let started = ContinuousClock.now
        let deadline = started + .milliseconds(Int(seconds * 1000))
        var result = CityStepResult(step: step)
        let outcomes = await withTaskGroup(of: Bool?.self) { group in
            var generator = SystemRandomNumberGenerator()
            var next = started
            while true {
                // Exponential gaps between bookings: a Poisson process at the step's rate.
                let gap = -log(1 - Double.random(in: 0..<1, using: &generator)) / step.bookingsPerSecond
                next = next + .milliseconds(Int(gap * 1000))
                guard next < deadline else { break }
                try? await Task.sleep(until: next)
                guard let lane = await pool.take() else {
                    group.addTask { nil }
                    continue
                }
                group.addTask { [plan, client, watch, pool] in
                    let completed = await lane.rideOnce(
                        pickupSeconds: plan.pickupSeconds, rideSeconds: plan.rideSeconds, client: client, watch: watch)
                    await pool.give(lane)
                    return completed
                }
            }
            try? await Task.sleep(until: deadline)
            var outcomes: [Bool?] = []
            for await outcome in group { outcomes.append(outcome) }
            return outcomes
        }
        // CPU from the step's start to its last ride's end: every ride it booked is paid for. The
        // fixes stream until then; the next step has drivers of its own.
        let used = CPUTimes.now(pids(load: loadNames)).since(cpuBefore)
        for name in loadNames { await platform.supervisor.stop(name) }
        result.seconds = max(Double((ContinuousClock.now - started).milliseconds) / 1000, 0.001)
        result.booked = outcomes.count { $0 != nil }
        result.unplaced = outcomes.count { $0 == nil }
        result.completed = outcomes.count { $0 == true }
        result.stuck = outcomes.count { $0 == false }
        let platformNames = Set(["ride-bus", "ride-tracking", "ride-users", "ride-trips", "ride-orders"])
        result.platformCPU = used.processes.filter { platformNames.contains($0.key) }.values.reduce(0, +)
        result.loadCPU = used.processes.filter { !platformNames.contains($0.key) }.values.reduce(0, +)
        let samples = await watch.latencies.flatMap { key, values in values.dropFirst(before[key] ?? 0) }
        let percentiles = Percentiles(samples)
        (result.reactionP50, result.reactionP99, result.reactionSamples) = (percentiles.value(50), percentiles.value(99), samples.count)
        return result
    }

    /// The platform's processes, this process and the step's load processes, by name.
    func pids(load: [String]) -> [String: Int32] {
        let names = ["ride-bus", "ride-tracking", "ride-users", "ride-trips", "ride-orders"] + load
        var pids = Dictionary(uniqueKeysWithValues: names.compactMap { name in platform.supervisor.pid(of: name).map { (name, $0) } })
        pids["ridectl (the load generator)"] = getpid()
        return pids
    }

    func stop() async {
        for task in background { task.cancel() }
        await watch.expire(all: true)
        await subscriber.close()
    }
}

/// The lanes not riding now.
actor LanePool {
    private var free: [LifecycleLane]
    init(_ lanes: [LifecycleLane]) { free = lanes }
    func take() -> LifecycleLane? { free.popLast() }
    func give(_ lane: LifecycleLane) { free.append(lane) }
}
