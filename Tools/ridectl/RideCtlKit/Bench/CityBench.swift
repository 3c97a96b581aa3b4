import ArgumentParser
import Bus
import Foundation
import PlatformLauncher
import RideContract
import RideModels
import ServiceKit
import SettingsKit

/// `ridectl bench city`: the largest city this machine carries — an open load shaped like a city,
/// raised step by step, each step judged by what riders feel (reaction p99 ≤ 5 ms, nothing stuck)
/// and what it costs (CPU per ride, the platform's share of the machine apart from the load's).
struct BenchCityCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "city",
        abstract: "The largest city this machine carries: drivers streaming fixes, riders booking at a Poisson rate, rides taking minutes.",
        discussion: """
            Starts the bus, tracking, users, trips and orders. Each step is a fraction of the city \
            (--steps of --drivers and --rides-per-hour, New York's peak by default): every driver \
            sends a fix every --fix-interval seconds (from separate load processes), riders book at \
            a Poisson rate, and each ride drives --pickup-minutes to the pickup and --ride-minutes \
            to the drop-off, --speedup times faster. Reaction latency is measured as the \
            benchmark's subscriber sees it, as in `bench lifecycle`. A step is met when reaction p99 ≤ 5 ms, no \
            ride is stuck and every booking found a free rider; the report names the largest met.
            """)

    @Option(help: "Drivers of the whole city (the last step's 100%).") var drivers = 50_000
    @Option(name: .customLong("rides-per-hour"), help: "Rides an hour of the whole city at its peak.") var ridesPerHour = 60_000
    @Option(help: "The fractions of the city to run, in order, comma-separated.") var steps = "0.05,0.1,0.25,0.5,1"
    @Option(name: .customLong("step-seconds"), help: "Seconds each step is measured.") var stepSeconds = 30.0
    @Option(name: .customLong("fix-interval"), help: "Seconds between a driver's fixes.") var fixInterval = 4.0
    @Option(help: "How much faster than real time the rides drive.") var speedup = 60.0
    @Option(name: .customLong("pickup-minutes"), help: "Minutes a driver drives to the pickup (before the speed-up).") var pickupMinutes =
        4.0
    @Option(name: .customLong("ride-minutes"), help: "Minutes a ride drives to the drop-off (before the speed-up).") var rideMinutes = 12.0
    @OptionGroup var bin: BinDirectoryOption
    @OptionGroup var format: BenchFormat

    func plan() throws -> CityPlan {
        var plan = CityPlan()
        (plan.drivers, plan.ridesPerHour, plan.fixInterval, plan.speedup) = (drivers, ridesPerHour, fixInterval, speedup)
        (plan.pickupMinutes, plan.rideMinutes) = (pickupMinutes, rideMinutes)
        let fractions = steps.split(separator: ",").map { Double($0.trimmingCharacters(in: .whitespaces)) }
        guard fractions.allSatisfy({ $0 != nil }) else {
            throw ValidationError("--steps must be fractions, comma-separated (e.g. 0.1,0.5,1), not \"\(steps.prefix(60))\"")
        }
        plan.fractions = fractions.compactMap { $0 }
        if let problem = plan.problem { throw ValidationError(problem) }
        guard plan.lanes <= 5000 else {
            throw ValidationError(
                "\(plan.lanes) rides in flight at once is more than the load generator's 5000 riders: lower --rides-per-hour or raise --speedup"
            )
        }
        guard stepSeconds >= 5, stepSeconds <= 3600 else { throw ValidationError("--step-seconds must be from 5 to 3600") }
        return plan
    }

    func validate() throws { _ = try plan() }

    func run() async throws {
        let plan = try plan()
        let setup =
            "city of \(drivers) drivers and \(ridesPerHour) rides/h, steps \(steps), \(Int(stepSeconds)) s each, rides \(Int(pickupMinutes))+\(Int(rideMinutes)) min at \(Int(speedup))×"
        try await BenchPlatform.measure(bench: "city", setup, bin: bin.path, json: format.json) { platform, table in
            try await platform.startService("ride-users", ["--password-rounds", "1000"])
            try await platform.startService("ride-trips", ["--routes", "straight"])
            try await platform.startService("ride-orders", ["--offer-timeout-s", "3600", "--concurrency", "32", "--routes", "straight"])
            var options = MDPClient.Options()
            options.timeout = .seconds(30)
            let client = try await ServiceClient(broker: platform.broker, options: options, logger: CLILogging.logger)
            let lanes = try await LifecycleLanes.prepare(count: plan.lanes, client: client)
            let run = try await CityRun.start(platform: platform, client: client, lanes: lanes, plan: plan)
            var results: [CityStepResult] = []
            for (index, step) in plan.steps.enumerated() {
                Output.err(
                    "step \(index + 1)/\(plan.steps.count): \(step.drivers) drivers (\(step.fixesPerSecond) fixes/s), \(step.ridesPerHour) rides/h, \(Int(stepSeconds)) s…\n"
                )
                let result = try await run.step(step, index: index, seconds: stepSeconds)
                results.append(result)
                Self.add(result, to: &table)
                if result.stuck > 0 { break }  // rides stuck: past the limit, larger steps say nothing more
            }
            await run.stop()
            await client.close()
            let best = CityPlan.largest(results)
            table.add(
                "largest city carried (reaction p99 ≤ 5 ms, nothing stuck)",
                best.map { "\($0.step.drivers) drivers, \($0.step.ridesPerHour) rides/h" } ?? "none of the steps",
                "\(drivers) drivers, \(ridesPerHour) rides/h", met: best?.step.fraction == plan.fractions.last)
        }
    }

    static func add(_ result: CityStepResult, to table: inout BenchTable) {
        let step = result.step
        let cores = Double(ProcessInfo.processInfo.activeProcessorCount)
        table.add(
            "\(Int(step.fraction * 100))% — \(step.drivers) drivers (\(step.fixesPerSecond) fixes/s), \(step.ridesPerHour) rides/h",
            String(format: "%.1f ms / %.1f ms", result.reactionP50, result.reactionP99), "reaction p50 / p99, p99 ≤ 5 ms",
            met: result.reactionP99 <= 5)
        table.add(
            "  rides booked / completed / stuck", "\(result.booked) / \(result.completed) / \(result.stuck)", "none stuck",
            met: result.stuck == 0)
        if result.unplaced > 0 { table.add("  bookings with no free rider (the load's limit)", "\(result.unplaced)", "0", met: false) }
        table.add("  CPU per completed ride, the platform", result.cpuPerRide.map { String(format: "%.2f ms", $0) } ?? "–", "toward 3 ms")
        table.add(
            "  share of the machine: platform / load generator",
            String(
                format: "%.0f%% / %.0f%%", result.platformCPU / result.seconds / cores * 100, result.loadCPU / result.seconds / cores * 100),
            "reported")
    }
}
