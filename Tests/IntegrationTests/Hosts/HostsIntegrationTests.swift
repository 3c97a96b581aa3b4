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
@Suite(.serialized, .enabled(if: HostsGate.runs, Comment(rawValue: HostsGate.skipped)), .timeLimit(.minutes(10)))
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
        guard let security = try CurveOptions.parse([]).security(client: Roles.`operator`.name, serves: false, environment: [CurveOptions.directoryEnvironment: keys]) else {
            throw TestFailure("no CURVE settings from \(keys)")
        }
        _ = try await Context.shared.enableCurve(security)
        return keys
    }

    /// Where each process runs; each instance of the bus on the host of its name.
    static func placement(_ hosts: NetworkHosts, buses: [String]) -> [String: TestHost] {
        var placement = [
            "users": hosts["core"], "orders": hosts["core"], "trips": hosts["core"], "tracking": hosts["edge"],
            "notifications": hosts["edge"], "simulator": hosts["apps"],
        ]
        for instance in buses { placement[instance] = hosts[instance] }
        return placement
    }

    /// Starts the platform on the hosts, runs a 200-ride simulation for `seconds`, calls `breaking`
    /// once rides are under way, and checks and prints what the rides left behind. `buses`: the
    /// bus's instances, each on a host of its own (`bus-2` is a fifth host).
    func ridesSurvive(
        _ what: String, seconds: Int = 40, buses: [String] = ["bus"],
        _ breaking: @escaping (NetworkHosts, OrdersIntegrationTests.Platform, TestService, TestPostgresServer) async throws -> Void
    ) async throws {
        let keys = try await Self.secure()
        try await withNetworkHosts(Self.hostNames + buses.filter { !Self.hostNames.contains($0) }) { hosts in
            let core = hosts["core"]
            // Stopped before the hosts go (a process left in a namespace keeps it alive).
            let postgres = try await TestPostgresServer.start(host: core.address, launcher: core.launcher)
            do {
                try await ridesSurvive(what, seconds: seconds, buses: buses, keys: keys, hosts: hosts, postgres: postgres, breaking)
            } catch {
                try? await postgres.stop(immediate: true)
                throw error
            }
            try await postgres.stop()
        }
    }

    private func ridesSurvive(
        _ what: String, seconds: Int, buses: [String], keys: String, hosts: NetworkHosts, postgres: TestPostgresServer,
        _ breaking: @escaping (NetworkHosts, OrdersIntegrationTests.Platform, TestService, TestPostgresServer) async throws -> Void
    ) async throws {
        let database = try await postgres.newDatabase()
        try await withTestBus(
            "hosts", environment: [CurveOptions.directoryEnvironment: keys], placement: Self.placement(hosts, buses: buses), instances: buses
        ) { bus in
            let platform = try await OrdersIntegrationTests.Platform.start(bus, database: database)
            let notifications = try await TestService.start(
                on: bus, service: "notifications", executable: "ride-notifications", arguments: ["--database-url", database.urlString])
            let simulation = platform.simulate(drivers: FailureLoad.rides, riders: FailureLoad.rides, duration: seconds, timeout: .seconds(420))
            try await platform.waitUntilRidesAreUnderWay()
            try await breaking(hosts, platform, notifications, postgres)
            let result = try await simulation.value
            #expect(result.status == 0, "no ride stuck: \(result.stdout)\n\(result.stderr.suffix(3000))")
            let report = SimulationReport(text: result.stdout)
            let tally = try await RideTally.read(platform, report: report)
            print(
                """
                hosts test — \(what); CURVE on; hosts: \(hosts.hosts.map(\.description).joined(separator: ", "))
                \(tally.lines)
                  reactions: \(report.lines(containing: "reaction ").joined(separator: "; "))
                  progress: \(SimulationReport(text: result.stderr).lines(containing: "rides/s").joined(separator: "; "))
                """)
            await tally.printStoryOfOpenOrders(platform)
            tally.expectNothingLostOrDoubled()
        }
    }

    @Test func ridesRunAcrossFourHosts() async throws {
        try await ridesSurvive("no fault") { _, _, _, _ in }
    }

    @Test func aHostCutOffForTenSecondsAndHealedLosesNoRide() async throws {
        try await ridesSurvive("edge (tracking, notifications) cut off the network for 10 s, then healed") { hosts, _, _, _ in
            try await hosts.cut(hosts["edge"])
            try await Task.sleep(for: .seconds(10))
            try await hosts.heal(hosts["edge"])
        }
    }

    @Test func everyProcessOfAHostKilledAndStartedAgainLosesNoRide() async throws {
        try await ridesSurvive("every process of core (PostgreSQL, users, orders, trips) killed, started again 3 s later") { _, platform, _, postgres in
            for service in [platform.users, platform.orders, platform.trips] { platform.bus.supervisor.signal(service.name, SIGKILL) }
            try await postgres.stop(immediate: true)  // SIGQUIT: no shutdown checkpoint, crash recovery at the start
            try await Task.sleep(for: .seconds(3))
            try await postgres.startServer()
            for service in [platform.users, platform.orders, platform.trips] { try await service.startProcess() }
        }
    }

    @Test func delayAndLossBetweenHostsLoseNoRide() async throws {
        try await ridesSurvive("delay and loss between hosts") { hosts, _, _, _ in
            print("hosts test — shaping: \(try await hosts.shape(delay: .milliseconds(20), lossPercent: 1))")
        }
    }
}

/// Whether the hosts suite runs in this test process, and why not.
enum HostsGate {
    static let asked = ProcessInfo.processInfo.environment["RIDE_TEST_HOSTS"] == "1"
    static var runs: Bool { asked && NetworkHosts.unavailable == nil }
    static var skipped: String {
        asked ? "cannot make hosts here: \(NetworkHosts.unavailable ?? "")" : "run by `make test-hosts` (RIDE_TEST_HOSTS=1): it turns CURVE on for its whole test process"
    }
}
