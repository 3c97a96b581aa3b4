import ArgumentParser
import Bus
import Cities
import Foundation
import Geo
import RideContract
import RideModels
import ServiceKit
import SettingsKit
import Synchronization

/// `ridectl simulate`: drivers and riders against the running platform, with a live progress line
/// and a final report.
struct SimulateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "simulate",
        abstract: "Drivers (TrackingSDK devices driving street routes) and riders booking rides, against the running platform.",
        discussion: """
            Registers the drivers and riders (new phone numbers each run), starts each driver's \
            phone, and plays the apps: riders book rides between random places of the city — by \
            default central Helsinki's streets from the built-in road data, where cars drive their \
            routes at the roads' speeds and now and then take a wrong turn or stop in traffic \
            (--city grid: a box of streets at --center); \
            offered drivers accept (about one in five declines first, and the offer passes to the \
            next driver), drive to the pickup, start, drive to the dropoff and end the ride; rider \
            and driver exchange chat messages on the way and rate each other afterwards. Prints a \
            progress line, then a report: rides by status, stuck rides (open when the simulation \
            ends: 0 expected), the latency of each reaction of the orders service (from the event \
            that triggers it to the status it produces), declines, chat messages, ratings, the \
            rides in the riders' histories and the drivers' earnings. Exits 1 when a ride is stuck.

            On the bus (the default), it is an operator's tool: each call names its caller, and \
            the bus admits the operator's key to do so. With --gateway, the phones are real apps: \
            each person signs up and logs in at the gateway, every call is theirs over HTTP with \
            their own token, each ride is followed on its WebSocket, and the drivers' phones \
            stream to the device ingest (--ingest-server-key-file when it speaks CURVE); nothing \
            reaches the bus.
            """)

    @OptionGroup var bus: BusAddresses

    @Option(help: "Simulated drivers.") var drivers = 10
    @Option(help: "Simulated riders.") var riders = 10
    @Option(help: "How much faster than real time cars drive (1–6: faster cars would exceed what tracking accepts as a speed).")
    var speedup = 5.0
    @Option(help: "Seconds during which riders book rides (0: until Ctrl-C).") var duration = 60.0
    @Option(
        help:
            "Seconds to wait after that for open rides to finish; past it, the run waits on while every open ride is on time for its current step."
    ) var grace = 300.0
    @Option(
        help:
            ArgumentHelp(
                "Where the cars drive: roads (the city's roads — the bundle RIDE_CITY names, else built-in central Helsinki: routes at the roads' speeds, wrong turns, traffic), "
                    + "a city bundle directory (ridectl city build), or grid (a box of streets at --center, --box-km)")
    )
    var city = "roads"
    @Option(help: "Centre of the grid city, lat,lon.") var center = "47.8359,35.1146"
    @Option(name: .customLong("box-km"), help: "Side of the grid city in km.") var boxKilometres = 3.0
    @Option(
        name: .customLong("wrong-turn-rate"), help: "On roads: the share of drives (0–1) that take a wrong turn (the trip is re-routed).")
    var wrongTurnRate = 0.1
    @Option(
        name: .customLong("traffic-rate"),
        help: "On roads: the share of drives (0–1) that stop in traffic for 1–3 minutes (the trip runs late).")
    var trafficRate = 0.1
    @Option(
        name: .customLong("driver-cancel-rate"),
        help:
            "The share of accepted rides (0–1) whose driver cancels on the way to the pickup; the order goes back to dispatch and another driver takes it."
    )
    var driverCancelRate = 0.0
    enum Keys {
        static let ingest = SettingKey(
            "ingest", env: "RIDE_TRACKING_INGEST", default: "tcp://127.0.0.1:5558",
            "ride-tracking's device ingest; with tracking in shards, every shard's, comma-separated in shard order")
        static let gateway = SettingKey(
            "gateway", env: "RIDE_GATEWAY_URL",
            "Play the apps through this gateway only (HTTP and its WebSockets, each person's own token; no bus), e.g. http://localhost:8080"
        )
        static let ingestServerKeyFile = SettingKey(
            "ingest-server-key-file", env: "RIDE_TRACKING_INGEST_SERVER_KEY_FILE",
            "The device ingest's CURVE public key (a .pub file of ridectl keys, e.g. curve/server.pub), for phones that are not on a secured bus"
        )
        static let publishableKey = SettingKey(
            "publishable-key", env: "HyperTrackPublishableKey", default: "pk_dev_ridesharing", "Publishable key of the drivers' SDKs")
    }
    @Option(name: Keys.ingest.name, help: Keys.ingest.help) var ingest: String?
    @Option(
        name: .customLong("share-links"),
        help: "The gateway's address, to print the share links of the first three rides (empty: none; with --gateway, the links it gives).")
    var shareLinks = "http://localhost:8080"
    @Option(name: Keys.gateway.name, help: Keys.gateway.help) var gateway: String?
    @Option(name: Keys.ingestServerKeyFile.name, help: Keys.ingestServerKeyFile.help) var ingestServerKeyFile: String?
    @Option(name: Keys.publishableKey.name, help: Keys.publishableKey.help) var publishableKey: String?

    func validate() throws {
        guard (1...10_000).contains(drivers), (1...10_000).contains(riders) else {
            throw ValidationError("--drivers and --riders must be from 1 to 10000")
        }
        guard speedup >= 1, speedup <= 6 else { throw ValidationError("--speedup must be from 1 to 6, got \(speedup)") }
        guard duration >= 0, grace >= 0 else { throw ValidationError("--duration and --grace must not be negative") }
        guard parsedCenter() != nil else { throw ValidationError("--center must be lat,lon (e.g. 47.8359,35.1146), got \(center)") }
        guard boxKilometres >= 1, boxKilometres <= 100 else { throw ValidationError("--box-km must be from 1 to 100") }
        guard (0...1).contains(driverCancelRate) else {
            throw ValidationError("--driver-cancel-rate must be from 0 to 1, got \(driverCancelRate)")
        }
        guard ["roads", "grid"].contains(city) || FileManager.default.fileExists(atPath: city) else {
            throw ValidationError("--city must be roads, grid or a city bundle directory, got \(city.prefix(80))")
        }
        guard (0...1).contains(wrongTurnRate), (0...1).contains(trafficRate) else {
            throw ValidationError("--wrong-turn-rate and --traffic-rate must be from 0 to 1, got \(wrongTurnRate) and \(trafficRate)")
        }
        _ = try ingestEndpoints()
        _ = try gatewayURL()
        _ = try ingestServerKey()
    }

    /// The gateway to play the apps through (nil: the bus).
    func gatewayURL() throws -> String? {
        let setting = Keys.gateway.resolve(gateway)
        guard !setting.value.isEmpty else { return nil }
        guard let url = URL(string: setting.value), ["http", "https"].contains(url.scheme ?? ""), url.host?.isEmpty == false,
            url.query == nil
        else {
            throw ValidationError(
                "the gateway (\(setting.origin)) must be an http or https URL such as http://localhost:8080, got '\(setting.value.prefix(80))'"
            )
        }
        return setting.value
    }

    /// The device ingest's CURVE public key, when a file names it.
    func ingestServerKey() throws -> String? {
        let setting = Keys.ingestServerKeyFile.resolve(ingestServerKeyFile)
        guard !setting.value.isEmpty else { return nil }
        do {
            return try CurveKeyDirectory.readKey(setting.value, what: "the device ingest's public key (\(setting.origin))")
        } catch let error as ConfigurationError {
            throw ValidationError(error.message)
        }
    }

    /// The tracking shards' ingest endpoints, in shard order.
    func ingestEndpoints() throws -> [String] {
        let setting = Keys.ingest.resolve(ingest)
        do {
            let endpoints = try EndpointSyntax.validateList(setting, name: "device ingest", forBinding: false)
            guard endpoints.count <= DeviceShards.maximumCount else {
                throw ConfigurationError(
                    "device ingest (\(setting.origin)): one endpoint per tracking shard, at most \(DeviceShards.maximumCount); got \(endpoints.count)"
                )
            }
            return endpoints
        } catch let error as ConfigurationError {
            throw ValidationError(error.message)
        }
    }

    func parsedCenter() -> GeoPoint? {
        let parts = center.split(separator: ",").compactMap { Double($0.trimmingCharacters(in: .whitespaces)) }
        guard parts.count == 2, (-85...85).contains(parts[0]), (-180...180).contains(parts[1]) else { return nil }
        return GeoPoint(latitude: parts[0], longitude: parts[1])
    }

    func run() async throws {
        var settings = Simulation.Settings()
        settings.drivers = drivers
        settings.riders = riders
        settings.speedup = speedup
        settings.driverCancelRate = driverCancelRate
        if city == "grid" {
            settings.city = CityGrid(center: parsedCenter()!, sizeKilometres: boxKilometres)
        } else {
            let environment = ProcessInfo.processInfo.environment["RIDE_CITY"].flatMap { $0.isEmpty ? nil : $0 }
            let setting = city == "roads" ? CitySetting(path: environment, origin: "RIDE_CITY") : CitySetting(path: city, origin: "--city")
            let bundle: CityBundle
            do { bundle = try setting.load() } catch { throw ValidationError("\(error); try --city grid") }
            var roads = RoadCity(routes: bundle.routes, places: bundle.roads.points)
            (roads.wrongTurnRate, roads.trafficRate) = (wrongTurnRate, trafficRate)
            settings.city = roads
        }
        settings.ingest = try ingestEndpoints()
        settings.shareLinks = shareLinks.isEmpty ? nil : shareLinks
        settings.publishableKey = Keys.publishableKey.resolve(publishableKey).value
        settings.ingestServerKey = try ingestServerKey()
        let apps: any RideApps
        if let gateway = try gatewayURL() {
            apps = GatewayApps(base: gateway, logger: CLILogging.logger)
        } else {
            try await bus.secure()
            apps = try await BusApps(broker: try bus.brokerEndpoint(), events: try bus.subscribeEndpoint(), logger: CLILogging.logger)
        }
        let report = try await SimulationRunner.run(settings: settings, apps: apps, duration: duration, grace: grace)
        Output.out(report.text)
        if report.stuck > 0 { throw ExitCode(1) }
    }
}

/// Runs a simulation to its end and reports.
enum SimulationRunner {
    struct Report {
        var text: String
        var stuck: Int
    }

    /// On the bus at `broker` and `events`, as an operator's tool.
    static func run(settings: Settings, broker: String, events: String, duration: Double, grace: Double) async throws -> Report {
        let apps = try await BusApps(broker: broker, events: events, logger: CLILogging.logger)
        return try await run(settings: settings, apps: apps, duration: duration, grace: grace)
    }

    static func run(settings: Settings, apps: any RideApps, duration: Double, grace: Double) async throws -> Report {
        let simulation = Simulation(settings: settings, apps: apps, logger: CLILogging.logger)
        Output.err("registering \(settings.drivers) drivers and \(settings.riders) riders…\n")
        do {
            try await simulation.setUp()
        } catch {
            await apps.close()
            throw error
        }
        let lanes = RideLanes()
        let consumer = Task {
            for await update in apps.updates {
                await lanes.enqueue(update.rideID) { await simulation.handle(update) }
            }
        }
        let progress = ProgressLine()
        let bookingEnds = duration > 0 ? ContinuousClock.now + .milliseconds(Int(duration * 1000)) : nil
        var tick = 0
        while !Task.isCancelled {
            tick += 1
            await simulation.bookDueRides()
            if tick % 4 == 0 { await simulation.poll() }
            progress.show(await line(simulation))
            if let bookingEnds, ContinuousClock.now >= bookingEnds { break }
            try? await Task.sleep(for: .milliseconds(500))
        }
        await simulation.stopBooking()
        let graceEnds = ContinuousClock.now + .milliseconds(Int(grace * 1000))
        // Past the grace, rides on time for their current step (a late booking's drives, reactions
        // slowed by a loaded machine) are waited for until one is overdue: each step has its due
        // time, so the end comes from the rides' own work, not from the machine's speed.
        while await simulation.openRides > 0, !Task.isCancelled {
            if ContinuousClock.now >= graceEnds, await simulation.stuckRides() > 0 { break }
            if tick % 4 == 0 { await simulation.poll() }
            tick += 1
            progress.show(await line(simulation) + "  (finishing)")
            try? await Task.sleep(for: .milliseconds(500))
        }
        progress.end()
        consumer.cancel()
        // Interrupted (Ctrl-C in `ridectl up --simulate`): the report still asks the platform —
        // from a task of its own, which the cancellation of this one does not reach.
        let interrupted = Task.isCancelled
        let report = await Task { () -> Report in await Self.report(simulation, apps: apps, interrupted: interrupted) }.value
        await simulation.shutDown()
        await apps.close()
        return report
    }

    typealias Settings = Simulation.Settings

    static func line(_ simulation: Simulation) async -> String {
        let counts = await simulation.byStatus
        let elapsed = await simulation.elapsed
        let completed = counts[.completed] ?? 0
        let parts = OrderStatus.allCases.compactMap { status in counts[status].map { "\(status.rawValue) \($0)" } }
        return String(format: "%5.0f s  ", elapsed) + parts.joined(separator: "  ")
            + String(format: "  |  %.2f rides/s", Double(completed) / max(elapsed, 1))
    }

    /// `interrupted`: stopped mid-run, so open rides are in flight unless overdue (stuck); after a
    /// run that ended by itself (its grace included), every ride still open is stuck.
    static func report(_ simulation: Simulation, apps: any RideApps, interrupted: Bool = false) async -> Report {
        let counts = await simulation.byStatus
        let open = await simulation.openRides
        let stuck = interrupted ? await simulation.stuckRides() : open
        let finishedIDs = await simulation.finishedRideIDs
        let elapsed = await simulation.elapsed
        var table = BenchTable(
            title:
                "ridectl simulate — \(simulation.settings.drivers) drivers, \(simulation.settings.riders) riders, speed-up \(simulation.settings.speedup)×, \(Int(elapsed)) s"
        )
        table.add("rides completed", "\(counts[.completed] ?? 0)", "reported")
        table.add("rides cancelled", "\(counts[.cancelled] ?? 0)", "reported")
        if interrupted {
            table.add("rides in flight at the stop (on time)", "\(open - stuck)", "reported")
            table.add("rides stuck (no progress for longer than expected)", "\(stuck)", "0", met: stuck == 0)
        } else {
            table.add("rides stuck (open at the end)", "\(stuck)", "0", met: stuck == 0)
        }
        table.add("completed rides per second", String(format: "%.2f", Double(counts[.completed] ?? 0) / max(elapsed, 1)), "reported")
        for (reaction, samples) in await simulation.reactionLatencies.sorted(by: { $0.key < $1.key }) {
            let percentiles = Percentiles(samples)
            table.add(
                "reaction \(reaction), p50 / p99", String(format: "%.1f ms / %.1f ms", percentiles.value(50), percentiles.value(99)),
                "\(samples.count) samples")
        }
        let extras = await simulation.extras
        table.add("offers declined (passed to the next driver)", "\(extras.declines)", "reported")
        table.add("drivers who cancelled (order re-dispatched)", "\(extras.driverCancels)", "reported")
        table.add("chat messages sent", "\(extras.messages)", "reported")
        table.add("ratings given", "\(extras.ratings)", "reported")
        table.add("wrong turns (trips re-routed)", "\(extras.wrongTurns)", "reported")
        // After a whole run the phones first send what they hold, so that every fix is counted.
        if !interrupted { await simulation.flushFixes(timeout: .seconds(20)) }
        let fixes = await simulation.fixes
        table.add("driver fixes acknowledged (stored)", "\(fixes.acknowledged)", "reported")
        table.add("driver fixes waiting or dropped", "\(fixes.unsent) waiting, \(fixes.dropped) dropped", "reported")
        table.add("phones moved to another tracking shard", "\(fixes.shardSwitches)", "reported")
        table.add("stops in traffic (trips late)", "\(extras.trafficStops)", "reported")
        // Only rides finished before the report counts: one in flight may finish while it asks.
        let finished = finishedIDs.count
        let history = await RideLedger.historyRides(riders: await simulation.riderIDs, apps: apps, among: finishedIDs)
        table.add("rides in the riders' histories", "\(history)", "\(finished)", met: history == finished)
        let earnings = await RideLedger.earnings(drivers: await simulation.driverNames, apps: apps)
        let completed = counts[.completed] ?? 0
        // Stopped mid-run, a ride whose end_ride was cancelled by the stop may have been paid all the same.
        let paid = interrupted ? completed...(completed + open) : completed...completed
        table.add(
            "rides paid (drivers' earnings today)", "\(earnings.rides)",
            paid.count == 1 ? "\(completed)" : "\(paid.lowerBound)–\(paid.upperBound)",
            met: paid.contains(earnings.rides))
        table.add("drivers' earnings today", earnings.text, "reported")
        var text = table.render()
        let failures = await simulation.failures
        if !failures.isEmpty {
            text +=
                "\nfailed calls:\n" + failures.sorted { $0.value > $1.value }.map { "  \($0.value)×  \($0.key)" }.joined(separator: "\n")
                + "\n"
        }
        return Report(text: text, stuck: stuck)
    }
}

/// What the report reads back from the platform: the riders' ride histories and the drivers' earnings.
enum RideLedger {
    /// Rides across the riders' histories (every page) that are among `rides`.
    static func historyRides(riders: [String], apps: any RideApps, among rides: Set<String>) async -> Int {
        var total = 0
        for rider in riders {
            var before: String?
            repeat {
                guard let page = try? await apps.history(of: rider, before: before) else { break }
                total += page.rides.filter { rides.contains($0.order.id) }.count
                before = page.nextBefore
            } while before != nil
        }
        return total
    }

    /// Today's paid rides and earnings across the drivers (payments follow COMPLETED within
    /// milliseconds; the last ones are given a moment).
    static func earnings(drivers: [String: String], apps: any RideApps) async -> (rides: Int, text: String) {
        try? await Task.sleep(for: .seconds(1))
        var rides = 0
        var cents = 0
        var best = (name: "", cents: 0)
        var currency = "USD"
        for (driver, name) in drivers {
            guard let earnings = try? await apps.earnings(of: driver) else { continue }
            currency = earnings.currency
            rides += earnings.days.reduce(0) { $0 + $1.rides }
            cents += earnings.totalCents
            if earnings.totalCents > best.cents { best = (name, earnings.totalCents) }
        }
        func money(_ cents: Int) -> String { String(format: "%@ %d.%02d", currency, cents / 100, cents % 100) }
        return (rides, drivers.isEmpty ? "none" : "\(money(cents)) in all, most \(money(best.cents)) (\(best.name))")
    }
}

/// One line rewritten in place on a terminal; a line every 5 s otherwise.
final class ProgressLine: Sendable {
    private let lastPrinted = Mutex<ContinuousClock.Instant?>(nil)
    private let terminal = Output.stderrIsTerminal

    func show(_ text: String) {
        if terminal {
            Output.err("\r\u{1B}[2K" + text)
            return
        }
        let due = lastPrinted.withLock { last -> Bool in
            guard last.map({ ContinuousClock.now - $0 >= .seconds(5) }) ?? true else { return false }
            last = ContinuousClock.now
            return true
        }
        if due { Output.err(text + "\n") }
    }

    func end() { if terminal { Output.err("\n") } }
}
