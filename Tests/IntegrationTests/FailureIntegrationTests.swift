import Bus
import Foundation
import ServiceKit
import Testing
import Wire

/// Every process of the platform SIGKILLed in turn — users, tracking, trips, orders,
/// notifications, then the bus itself — and restarted, then orders and trips each paused
/// (SIGSTOP) past the heartbeat, while a simulation keeps riders booking.
/// Afterwards: no ride stuck, one trip per leg, each status once, one payment per completed ride,
/// every chat message and rating the apps were told was stored is there, and every completed ride
/// notified its rider once. The counts are printed.
@Suite(.serialized) struct FailureIntegrationTests {
    @Test func killingEachProcessInTurnLosesNoRideAndDoublesNothing() async throws {
        try await withTestBus("failures") { bus in
            let platform = try await OrdersIntegrationTests.Platform.start(bus)
            let notifications = try await TestService.start(on: bus, service: "notifications", executable: "ride-notifications")
            let simulation = platform.simulate(drivers: FailureLoad.rides, riders: FailureLoad.rides, duration: 45, timeout: .seconds(300))
            try await platform.waitUntilRidesAreUnderWay()
            let restarts: [(String, () async throws -> Void)] = [
                (platform.users.name, platform.users.startProcess), (platform.tracking.process.name, platform.tracking.startProcess),
                (platform.trips.name, platform.trips.startProcess), (platform.orders.name, platform.orders.startProcess),
                (notifications.name, notifications.startProcess), ("bus", { try await bus.startProcess() }),
            ]
            for (name, restart) in restarts {
                bus.supervisor.signal(name, SIGKILL)
                try await Task.sleep(for: .milliseconds(500))
                try await restart()
                try await Task.sleep(for: .seconds(3))
            }
            // Paused for longer than the broker's heartbeat liveness (3 × 2.5 s): the broker drops its
            // workers; once resumed, they find they were dropped and register again.
            for service in [platform.orders, platform.trips] {
                bus.supervisor.signal(service.name, SIGSTOP)
                try await Task.sleep(for: .seconds(9))
                bus.supervisor.signal(service.name, SIGCONT)
                try await bus.waitForWorkers(service.service)
            }
            let result = try await simulation.value
            #expect(result.status == 0, "no ride stuck: \(result.stdout)\n\(result.stderr.suffix(3000))")
            let report = SimulationReport(text: result.stdout)
            let tally = try await RideTally.read(platform, report: report)
            let notificationEvents = try await Outboxes.events(notifications)
            let ratings = tally.orderEvents.filter { $0["type"] == "order.rated" }.count
            let completedNotes = notificationEvents.filter { $0["type"] == "notification" && $0["data"]?["kind"] == "ride_completed" }
                .compactMap { $0["data"]?["id"]?.stringValue }
            print(
                """
                failure test — each process SIGKILLed and restarted in turn (users, tracking, trips, orders, notifications, bus), then orders and trips paused 9 s
                \(tally.lines)
                  ratings stored \(ratings) of \(report.count("ratings given") ?? -1) acknowledged; ride_completed notifications \(completedNotes.count), distinct \(Set(completedNotes).count)
                """)
            await tally.printStoryOfOpenOrders(platform)
            tally.expectNothingLostOrDoubled()
            #expect(ratings >= (report.count("ratings given") ?? .max), "every acknowledged rating stored")
            let completed = tally.completed
            #expect(completedNotes.count == completed && Set(completedNotes).count == completed, "each completed ride notified once")
        }
    }
}

/// The full-disk failure test, a suite of its own so that it runs beside the serialized
/// `FailureIntegrationTests` rather than after them (those three in a row were the test run's
/// longest path): two of the 200-ride failure simulations at once at the most, never three.
struct FullDiskIntegrationTests {
    /// The disk holding every service's SQLite files fills up mid-simulation, and is freed 10 s later.
    /// Meanwhile no process exits, a write that cannot be stored is answered 503 `storage_full`
    /// (nothing of it kept: the same registration succeeds afterwards), and tracking refuses the
    /// phones' batches so they send them again. Afterwards every ride finishes, nothing doubled.
    @Test(.enabled(if: SmallDisk.canMount, "mounting a small tmpfs needs root"))
    func aFullDiskRefusesWritesCleanlyAndRidesFinishOnceThereIsRoom() async throws {
        try await withTestBus("full-disk") { bus in
            let disk = try await SmallDisk.mount(at: bus.dataRoot, megabytes: 48)
            do {
                try await fullDisk(bus, disk)
            } catch {
                bus.supervisor.killAll()
                await disk.unmount()
                throw error
            }
            await bus.supervisor.stopAll(grace: .seconds(5))
            await disk.unmount()
        }
    }

    func fullDisk(_ bus: TestBus, _ disk: SmallDisk) async throws {
        let platform = try await OrdersIntegrationTests.Platform.start(bus)
        let notifications = try await TestService.start(on: bus, service: "notifications", executable: "ride-notifications")
        let simulation = platform.simulate(drivers: FailureLoad.rides, riders: FailureLoad.rides, duration: 30, timeout: .seconds(300))
        try await platform.waitUntilRidesAreUnderWay()

        try await disk.fill()
        // SQLite may still fit a few writes into pages its files already hold; registrations soon need more.
        var refused: (phone: String, reply: JSONValue)?
        var otherFailures: [String] = []
        for attempt in 0..<200 where refused == nil {
            let phone = "+38050\(String(format: "%07d", 7_000_000 + attempt))"
            let reply = try await platform.users.call(
                "register", #"{"role":"rider","name":"Full","phone_number":"\#(phone)","password":"secret123"}"#)
            if reply.status == 503 {
                refused = (phone, reply.body)
            } else if reply.status != 201 {
                otherFailures.append("\(reply.status) \(reply.body)")
            }
        }
        let (phone, body) = try #require(refused, "no registration was refused on a full disk")
        #expect(body["error"]?["code"] == "storage_full", "\(body)")
        #expect(otherFailures.isEmpty, "every write either stored or refused as storage_full: \(otherFailures)")
        try await Task.sleep(for: .seconds(10))
        let running = [
            platform.users.name, platform.tracking.process.name, platform.trips.name, platform.orders.name, notifications.name, "bus",
        ]
        for name in running { #expect(bus.supervisor.isRunning(name), "\(name) still runs on a full disk") }
        let log = platform.tracking.process.log + platform.orders.log
        #expect(log.contains("database or disk is full"), "the disk really was full for the services")

        try disk.free()
        let again = try await platform.users.call(
            "register", #"{"role":"rider","name":"Full","phone_number":"\#(phone)","password":"secret123"}"#)
        #expect(again.status == 201, "the refused registration left nothing behind: \(again)")

        let result = try await simulation.value
        #expect(result.status == 0, "no ride stuck: \(result.stdout)\n\(result.stderr.suffix(3000))")
        let tally = try await RideTally.read(platform, report: SimulationReport(text: result.stdout))
        print(
            """
            full-disk test — the data disk full for 10 s mid-simulation
            \(tally.lines)
            """)
        await tally.printStoryOfOpenOrders(platform)
        tally.expectNothingLostOrDoubled()
    }
}

/// How many rides a failure test keeps going at once: a rider and a driver each (every rider books
/// again when a ride ends). 200 as the failure tests promise; `RIDE_FAILURE_RIDES` for a quick run.
enum FailureLoad {
    static let rides = ProcessInfo.processInfo.environment["RIDE_FAILURE_RIDES"].flatMap(Int.init) ?? 200
}

/// A small tmpfs (root only) standing in for a disk that fills up.
struct SmallDisk: Sendable {
    let path: String

    static var canMount: Bool { getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/bin/mount") }

    static func mount(at path: String, megabytes: Int) async throws -> SmallDisk {
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        let result = try await runCommand("/bin/mount", ["-t", "tmpfs", "-o", "size=\(megabytes)m", "tmpfs", path])
        guard result.status == 0 else { throw TestFailure("mount tmpfs at \(path): \(result.stderr)") }
        return SmallDisk(path: path)
    }

    var filler: String { path + "/filler" }

    /// Writes a file until the disk has no room left.
    func fill() async throws {
        let result = try await runCommand("/bin/dd", ["if=/dev/zero", "of=\(filler)", "bs=64k"])
        guard result.stderr.contains("No space left on device") else { throw TestFailure("dd did not fill \(path): \(result.stderr)") }
    }

    func free() throws { try FileManager.default.removeItem(atPath: filler) }

    /// Detaches the tmpfs even while files on it are still open (lazy unmount).
    func unmount() async { _ = try? await runCommand("/bin/umount", ["-l", path]) }
}
