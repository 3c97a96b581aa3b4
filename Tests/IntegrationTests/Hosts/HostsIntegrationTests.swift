import Foundation
import RideContract
import ServiceKit
import TestPostgres
import Testing
import ZeroMQ

/// The platform on four hosts made as network namespaces (`NetworkHosts`), over TCP between them:
/// the bus on `bus` (and a second bus on `bus-2` in `BusFailoverOnHosts.swift`); PostgreSQL and
/// users, orders and trips on `core`; tracking and notifications on `edge` (their state in
/// PostgreSQL on `core` too); the simulator (riders' and drivers' apps) on `apps`. Each test drives 200 concurrent rides and
/// breaks the network or a host on the way; afterwards every ride has completed or was cleanly
/// cancelled, none is stuck, no trip or payment is doubled, no acknowledged chat message is lost,
/// and the counts are printed. The bus is secured with CURVE, every process with the key of its own
/// role, and this test process is one of its clients (the operator's key, as `ridectl`): CURVE is on for every socket of the process, so the suite runs on its
/// own, with `RIDE_TEST_HOSTS=1` — `make test-hosts`, which CI runs after `make test`.
@Suite(.serialized, .enabled(if: HostsGate.runs, Comment(rawValue: HostsGate.skipped)), .timeLimit(.minutes(12)))
struct HostsIntegrationTests {
    static let hostNames = ["bus", "core", "edge", "apps"]

    /// One set of CURVE keys for the suite (`ridectl keys init`'s layout: the server's pair and a
    /// pair per client).
    static let keys: Result<String, any Error> = Result {
        let path = try makeScratchDirectory("hosts-keys") + "/keys"
        _ = try CurveKeyDirectory.create(at: path)
        return path
    }

    /// CURVE on for this process's sockets, as an operator (what `ridectl`'s key is named after, and
    /// the role that may call every op); the keys' directory.
    static func secure() async throws -> String {
        let keys = try keys.get()
        guard
            let security = try CurveOptions.parse([]).security(
                client: Roles.`operator`.name, serves: false, environment: [CurveOptions.directoryEnvironment: keys])
        else {
            throw TestFailure("no CURVE settings from \(keys)")
        }
        _ = try await Context.shared.enableCurve(security)
        return keys
    }

    /// What runs where beyond the four hosts: the bus's instances (each on a host of its name;
    /// `bus-2` is a fifth), PostgreSQL with a synchronous standby (`db` and `db-2` instead of
    /// PostgreSQL on `core`), tracking as shards (`tracking-K` on `edge-K+1`, on PostgreSQL).
    struct Layout {
        var buses = ["bus"]
        var standby = false
        var trackingShards = 1

        var extraHosts: [String] {
            buses.filter { !HostsIntegrationTests.hostNames.contains($0) } + (standby ? ["db", "db-2"] : [])
                + (1..<trackingShards).map { "edge-\($0 + 1)" }
        }
    }

    /// What a fault is given: the hosts, the platform on them, and its PostgreSQL servers.
    struct Run {
        let hosts: NetworkHosts
        let platform: OrdersIntegrationTests.Platform
        let notifications: TestService
        let postgres: TestPostgresServer
        /// The primary's synchronous standby (`Layout.standby`).
        let standby: TestPostgresServer?
    }

    /// Where each process runs; each instance of the bus on the host of its name.
    static func placement(_ hosts: NetworkHosts, layout: Layout) -> [String: TestHost] {
        var placement = [
            "users": hosts["core"], "orders": hosts["core"], "trips": hosts["core"], "tracking": hosts["edge"],
            "notifications": hosts["edge"], "simulator": hosts["apps"],
        ]
        for instance in layout.buses { placement[instance] = hosts[instance] }
        for shard in 1..<layout.trackingShards { placement["tracking-\(shard)"] = hosts["edge-\(shard + 1)"] }
        return placement
    }

    /// Starts the platform on the hosts, runs a 200-ride simulation for `seconds`, calls `breaking`
    /// once rides are under way, and checks and prints what the rides left behind.
    func ridesSurvive(_ what: String, seconds: Int = 40, layout: Layout = Layout(), _ breaking: @escaping (Run) async throws -> Void)
        async throws
    {
        let keys = try await Self.secure()
        try await withNetworkHosts(Self.hostNames + layout.extraHosts) { hosts in
            let home = hosts[layout.standby ? "db" : "core"]
            // Stopped before the hosts go (a process left in a namespace keeps it alive).
            // A commit is on its way to disk before it returns (the test server's default is not):
            // these tests kill PostgreSQL, and a fix acknowledged after its commit must survive that.
            let synchronous = ["synchronous_commit=on"] + (layout.standby ? ["synchronous_standby_names=*"] : [])
            let postgres = try await TestPostgresServer.start(host: home.address, launcher: home.launcher, settings: synchronous)
            var standby: TestPostgresServer?
            do {
                if layout.standby { standby = try await postgres.standby(host: hosts["db-2"].address, launcher: hosts["db-2"].launcher) }
                try await ridesSurvive(
                    what, seconds: seconds, layout: layout, keys: keys, hosts: hosts, postgres: postgres, standby: standby, breaking)
            } catch {
                try? await standby?.stop(immediate: true)
                try? await postgres.stop(immediate: true)
                throw error
            }
            try await standby?.stop()
            try await postgres.stop()
        }
    }

    private func ridesSurvive(
        _ what: String, seconds: Int, layout: Layout, keys: String, hosts: NetworkHosts, postgres: TestPostgresServer,
        standby: TestPostgresServer?,
        _ breaking: @escaping (Run) async throws -> Void
    ) async throws {
        var database = try await postgres.newDatabase()
        if let standby {
            database.hosts.append(.init(standby.host, port: standby.port))
            database.targetSessionAttrs = .readWrite
        }
        try await withTestBus(
            "hosts", environment: [CurveOptions.directoryEnvironment: keys], placement: Self.placement(hosts, layout: layout),
            instances: layout.buses
        ) { bus in
            let platform = try await OrdersIntegrationTests.Platform.start(bus, database: database, trackingShards: layout.trackingShards)
            let notifications = try await TestService.start(
                on: bus, service: "notifications", executable: "ride-notifications", arguments: ["--database-url", database.urlString])
            let simulation = platform.simulate(
                drivers: FailureLoad.rides, riders: FailureLoad.rides, duration: seconds, timeout: .seconds(540))
            try await platform.waitUntilRidesAreUnderWay()
            try await breaking(Run(hosts: hosts, platform: platform, notifications: notifications, postgres: postgres, standby: standby))
            let result = try await simulation.value
            #expect(result.status == 0, "no ride stuck: \(result.stdout)\n\(result.stderr.suffix(3000))")
            let report = SimulationReport(text: result.stdout)
            let tally = try await RideTally.read(platform, report: report)
            // The simulator's phones flushed what they held before its report: every fix they saw
            // acknowledged is stored, once, and none more (asked where writes go now).
            let writable =
                try await standby?.value("SELECT NOT pg_is_in_recovery()", database: database.database) == "t" ? standby! : postgres
            let stored =
                Int(
                    try await writable.value(
                        "SELECT count(*) FROM tracking.locations WHERE device_id LIKE 'sim-%'", database: database.database)) ?? -1
            let acknowledged = report.count("driver fixes acknowledged (stored)") ?? -1
            let waiting = report.count("driver fixes waiting or dropped") ?? -1
            #expect(
                acknowledged > 0 && waiting == 0 && stored == acknowledged,
                "every acknowledged fix stored: \(stored) stored, \(acknowledged) acknowledged, \(waiting) waiting")
            print(
                """
                hosts test — \(what); CURVE on; hosts: \(hosts.hosts.map(\.description).joined(separator: ", "))
                \(tally.lines)
                  driver fixes: \(acknowledged) acknowledged, \(stored) stored
                  reactions: \(report.lines(containing: "reaction ").joined(separator: "; "))
                  progress: \(SimulationReport(text: result.stderr).lines(containing: "rides/s").joined(separator: "; "))
                """)
            await tally.printStoryOfOpenOrders(platform)
            tally.expectNothingLostOrDoubled()
        }
    }

    @Test func aHostCutOffForTenSecondsAndHealedLosesNoRide() async throws {
        try await ridesSurvive("edge (tracking, notifications) cut off the network for 10 s, then healed") { run in
            let hosts = run.hosts
            try await hosts.cut(hosts["edge"])
            try await Task.sleep(for: .seconds(10))
            try await hosts.heal(hosts["edge"])
        }
    }

    @Test func everyProcessOfAHostKilledAndStartedAgainLosesNoRide() async throws {
        try await ridesSurvive("every process of core (PostgreSQL, users, orders, trips) killed, started again 3 s later") { run in
            let (platform, postgres) = (run.platform, run.postgres)
            for service in [platform.users, platform.orders, platform.trips] { platform.bus.supervisor.signal(service.name, SIGKILL) }
            try await postgres.stop(immediate: true)  // SIGQUIT: no shutdown checkpoint, crash recovery at the start
            try await Task.sleep(for: .seconds(3))
            try await postgres.startServer()
            for service in [platform.users, platform.orders, platform.trips] { try await service.startProcess() }
        }
    }

    @Test func delayAndLossBetweenHostsLoseNoRide() async throws {
        try await ridesSurvive("delay and loss between hosts") { run in
            print("hosts test — shaping: \(try await run.hosts.shape(delay: .milliseconds(20), lossPercent: 1))")
        }
    }
}

/// Whether the hosts suite runs in this test process, and why not.
enum HostsGate {
    static let asked = ProcessInfo.processInfo.environment["RIDE_TEST_HOSTS"] == "1"
    static var runs: Bool { asked && NetworkHosts.unavailable == nil }
    static var skipped: String {
        asked
            ? "cannot make hosts here: \(NetworkHosts.unavailable ?? "")"
            : "run by `make test-hosts` (RIDE_TEST_HOSTS=1): it turns CURVE on for its whole test process"
    }
}
