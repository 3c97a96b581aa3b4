import Bus
import Foundation
import PlatformLauncher
import ServiceKit
import Testing
import Wire

/// `ridectl` against a real bus: what an operator types.
@Suite(.timeLimit(.minutes(2))) struct RidectlTests {
    @Test func callPrintsTheReplyAndItsExitStatusSaysHowItWent() async throws {
        try await withTestBus("call") { bus in
            try bus.startEchoWorker("worker")
            try await bus.waitForWorkers("echo")
            let ok = try await runCommand(Binaries.ridectl, ["call", "echo", "echo", #"{"text":"hi"}"#] + bus.ridectlFlags)
            #expect(ok.status == 0)
            #expect(ok.stderr.contains("200 OK"))
            #expect(try JSONCoding.decode(JSONValue.self, from: Array(ok.stdout.utf8)) == ["text": "hi"])

            let fromStdin = try await runCommand(
                Binaries.ridectl, ["call", "echo", "echo", "-"] + bus.ridectlFlags, stdin: #"{"text":"piped"}"#)
            #expect(fromStdin.status == 0)
            #expect(fromStdin.stdout.contains("piped"))

            let notFound = try await runCommand(Binaries.ridectl, ["call", "echo", "nope"] + bus.ridectlFlags)
            #expect(notFound.status == 1)
            #expect(notFound.stderr.contains("404 Not Found"))
            #expect(notFound.stdout.contains("unknown_op"))

            let invalid = try await runCommand(Binaries.ridectl, ["call", "echo", "echo", #"{"text":5}"#] + bus.ridectlFlags)
            #expect(invalid.status == 1)
            #expect(invalid.stdout.contains("text: expected a string"))

            let noWorker = try await runCommand(
                Binaries.ridectl, ["call", "nobody", "ping", "--timeout-ms", "200", "--attempts", "1"] + bus.ridectlFlags)
            #expect(noWorker.status == 2)
            #expect(noWorker.stderr.contains("no reply from service 'nobody'"))

            let badJSON = try await runCommand(Binaries.ridectl, ["call", "echo", "echo", "{oops"] + bus.ridectlFlags)
            #expect(badJSON.status == 64)
            #expect(badJSON.stderr.contains("not valid JSON"))
        }
    }

    @Test func statusShowsTheBusAndWhichServicesHaveWorkers() async throws {
        try await withTestBus("status") { bus in
            try bus.startEchoWorker("worker", service: "users", concurrency: 3)
            try await bus.waitForWorkers("users")
            // /health is a snapshot the broker refreshes several times a second.
            let deadline = ContinuousClock.now + .seconds(5)
            while try await bus.workerCount("users") < 3, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
            let (status, out, _) = try await runCommand(Binaries.ridectl, ["status"] + bus.ridectlFlags)
            #expect(status == 0)
            #expect(out.contains("bus: ok"))
            let users = out.split(separator: "\n").first { $0.hasPrefix("users") }.map(String.init) ?? ""
            #expect(users.contains("200 up"), "\(out)")
            #expect(users.split(separator: " ", omittingEmptySubsequences: true)[1] == "3", "three workers: \(users)")
            #expect(out.split(separator: "\n").first { $0.hasPrefix("orders") }?.contains("404 no workers") == true)
            let json = try await runCommand(Binaries.ridectl, ["status", "--json"] + bus.ridectlFlags)
            let report = try JSONCoding.decode(JSONValue.self, from: Array(json.stdout.utf8))
            #expect(report["bus"] == "ok")
        }
        let down = try await runCommand(
            Binaries.ridectl,
            ["status", "--bus-http", "http://127.0.0.1:\(try FreePort.next())", "--broker", "tcp://127.0.0.1:\(try FreePort.next())"])
        #expect(down.status == 1)
        #expect(down.stdout.contains("bus: down"))
    }

    @Test func tailPrintsEventsAsLinesOrJSONAndWarnsOfGaps() async throws {
        try await withTestBus("tail") { bus in
            let lines = Task {
                try await runCommand(Binaries.ridectl, ["tail", "demo.", "--count", "3", "--timeout", "30"] + bus.ridectlFlags)
            }
            let json = Task {
                try await runCommand(Binaries.ridectl, ["tail", "--json", "--count", "3", "--timeout", "30"] + bus.ridectlFlags)
            }
            // Publish until both tails have subscribed (a publisher can ask the bus who listens).
            let publisher = try await EventPublisher(endpoint: bus.ingress, source: "demo", logger: testLogger)
            #expect(await publisher.waitForSubscriber(to: "demo.hello"))
            // The bus passes each distinct prefix upstream once: "demo.", "" and the welcome topic
            // make 3 only when both tails have subscribed (either alone makes 2).
            let deadline = ContinuousClock.now + .seconds(30)
            while try await bus.metric("ride_bus_subscription_messages_total") ?? 0 < 3 && ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(20))
            }
            try publisher.publish(topic: "demo.hello", type: "demo", data: ["text": "hi there", "n": 1] as JSONValue)
            // A gap: the publisher skips sequences 2…4, as if they were lost.
            try publisher.publish(
                topic: "demo.hello", event: CloudEvent(source: "demo", type: "demo", sequence: 5, data: ["n": 5] as JSONValue))
            try publisher.publish(
                topic: "demo.hello", event: CloudEvent(source: "demo", type: "demo", sequence: 6, data: ["n": 6] as JSONValue))

            let text = try await lines.value
            #expect(text.status == 0, "\(text.stderr)")
            let printed = text.stdout.split(separator: "\n")
            try #require(printed.count == 3, "\(text.stdout)\n\(text.stderr)")
            #expect(printed[0].contains("demo.hello demo#1 n=1 text=\"hi there\""), "\(printed[0])")
            #expect(!text.stderr.contains("gap"), "tailing demo. does not cover every topic of source demo, so no gap warning")

            let raw = try await json.value
            #expect(raw.status == 0)
            let events = try raw.stdout.split(separator: "\n").map { try CloudEvent<JSONValue>.decode(Array($0.utf8)) }
            #expect(events.map(\.sequence) == [1, 5, 6])
            #expect(raw.stderr.contains("warning: sequence gap: source demo: expected sequence 2, received 5 (3 missed)"), "\(raw.stderr)")
            await publisher.close()
        }
    }

    @Test func tailReportsMalformedMessagesAndGoesOn() async throws {
        try await withTestBus("tail-bad") { bus in
            let tail = Task {
                try await runCommand(Binaries.ridectl, ["tail", "x.", "--count", "1", "--timeout", "30"] + bus.ridectlFlags)
            }
            let publisher = try await EventPublisher(endpoint: bus.ingress, source: "x", logger: testLogger)
            #expect(await publisher.waitForSubscriber(to: "x.y"))
            try publisher.publish(topic: "x.y", encodedEvent: Array("this is not json".utf8))
            try publisher.publish(topic: "x.y", type: "t", data: ["fine": true] as JSONValue)
            let result = try await tail.value
            #expect(result.status == 0)
            #expect(
                result.stderr.contains("warning: skipped malformed message: topic x.y: invalid event: (event): not valid JSON"),
                "\(result.stderr)")
            #expect(result.stdout.contains("fine=true"))
            await publisher.close()
        }
    }

    /// `ridectl contract`: the tables and the API document print; writing into a directory that is
    /// not the repository's names what it cannot read and writes nothing.
    @Test func contractPrintsTablesAndRefusesAPathWithoutTheDocs() async throws {
        let tables = try await runCommand(Binaries.ridectl, ["contract"])
        #expect(tables.status == 0 && tables.stdout.contains("<!-- routes -->") && tables.stdout.contains("| `accept` |"))
        let document = try await runCommand(Binaries.ridectl, ["contract", "--openapi"])
        #expect(document.status == 0)
        #expect((try? JSONCoding.decode(JSONValue.self, from: Array(document.stdout.utf8)))?["openapi"] == "3.1.0")
        let scratch = try makeScratchDirectory("contract")
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        let refused = try await runCommand(Binaries.ridectl, ["contract", "--write", scratch])
        #expect(refused.status == 64, "\(refused.stderr)")
        #expect(refused.stderr.contains("cannot read \(scratch)/docs/services/"), "\(refused.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch).isEmpty)
    }

    /// `simulate --gateway` and its ingest key: what is wrong is named before anything is sent.
    @Test func simulateRefusesAGatewayOrAKeyFileItCannotUse() async throws {
        let cases: [([String], String)] = [
            (["--gateway", "ftp://example.com"], "the gateway (--gateway) must be an http or https URL"),
            (["--gateway", "http://"], "must be an http or https URL"),
            (["--gateway", "localhost:8080"], "must be an http or https URL"),
            (
                ["--gateway", "http://127.0.0.1:1", "--ingest-server-key-file", "/nonexistent/server.pub"],
                "cannot read the device ingest's public key"
            ),
        ]
        for (flags, message) in cases {
            let refused = try await runCommand(Binaries.ridectl, ["simulate"] + flags, timeout: .seconds(30))
            #expect(refused.status == 64 && refused.stderr.contains(message), "\(flags): \(refused.status) \(refused.stderr)")
        }
        let fromEnvironment = try await runCommand(
            Binaries.ridectl, ["simulate"], environment: ["RIDE_GATEWAY_URL": "gopher://x"], timeout: .seconds(30))
        #expect(fromEnvironment.status == 64 && fromEnvironment.stderr.contains("RIDE_GATEWAY_URL"), "\(fromEnvironment.stderr)")
    }

    @Test func publishSaysWhenNobodyListens() async throws {
        try await withTestBus("publish") { bus in
            let nobody = try await runCommand(Binaries.ridectl, ["publish", "empty.topic", "--wait-ms", "200", "--pub", bus.ingress])
            #expect(nobody.status == 1)
            #expect(nobody.stderr.contains("nobody subscribes to empty.topic"))
            let bad = try await runCommand(Binaries.ridectl, ["publish", "has space", "--pub", bus.ingress])
            #expect(bad.status == 64)
        }
    }
}

/// `ridectl up` (what `make run` runs): starts the platform, stops it on SIGINT, and never restarts a
/// process that died — it stops everything and says which one.
@Suite(.timeLimit(.minutes(4)), .serialized) struct UpTests {
    /// Ports shifted into 15555–19106 (the gateway on 18080): clear of the defaults, of the free-port range tests use
    /// (20000–25999 for the tests, 26000–32767 for ridectl) and of Linux's ephemeral range (32768–60999), where outgoing connections live.
    static let offset = 10_000

    func startUp(_ scratch: String, binDirectory: String = Binaries.directory, simulate: Bool = false) throws -> ProcessSupervisor {
        let supervisor = ProcessSupervisor(output: .files(directory: scratch))
        try supervisor.start(
            name: "up", executable: Binaries.ridectl,
            arguments: [
                "up", "--port-offset", "\(Self.offset)", "--data-dir", "\(scratch)/data",
                "--bin-dir", binDirectory,
            ] + (simulate ? ["--simulate"] : []),
            // A password hash at production cost takes seconds in a debug build on a busy machine.
            environment: ["RIDE_PASSWORD_ROUNDS": "2000"])
        return supervisor
    }

    /// `make run`'s Ctrl-C mid-run: rides on their way are in flight, not stuck, and the histories
    /// and payments count the rides finished before the stop — a healthy run misses nothing.
    @Test func ctrlCMidSimulationReportsAHealthyRunAsHealthy() async throws {
        let scratch = try makeScratchDirectory("up-simulate")
        let supervisor = try startUp(scratch, simulate: true)
        defer { supervisor.killAll() }
        try await Self.waitForBanner(supervisor)
        let logPath = supervisor.logPath(of: "up")!
        // Stopped once some rides completed and others are surely under way.
        try await eventually("a ride completed", timeout: .seconds(150)) {
            let log = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
            return log.range(of: #"COMPLETED [1-9]"#, options: .regularExpression) != nil
        }
        supervisor.signal("up", SIGINT)
        #expect(await supervisor.waitForExit("up", timeout: .seconds(60)) == 0)
        let log = try String(contentsOfFile: logPath, encoding: .utf8)
        let report = String(log[(log.range(of: "ridectl simulate —")?.lowerBound ?? log.endIndex)...])
        #expect(report.contains("rides in flight at the stop (on time)"), "\(log.suffix(3000))")
        #expect(report.contains("rides stuck (no progress for longer than expected)"), "\(report)")
        #expect(!report.contains("MISSED"), "\(report)")
        try? FileManager.default.removeItem(atPath: scratch)
    }

    @Test func upStartsTheBusAndStopsCleanlyOnSIGINT() async throws {
        let scratch = try makeScratchDirectory("up")
        let supervisor = try startUp(scratch)
        defer { supervisor.killAll() }
        #expect(await waitUntilHealthy("http://127.0.0.1:\(9100 + Self.offset)/health", timeout: .seconds(30)))
        try await Self.waitForBanner(supervisor)
        let status = try await runCommand(
            Binaries.ridectl,
            [
                "status", "--bus-http", "http://127.0.0.1:\(9100 + Self.offset)",
                "--broker", "tcp://127.0.0.1:\(5557 + Self.offset)",
            ])
        #expect(status.status == 0)
        #expect(status.stdout.contains("bus: ok"))
        // One line per service's workers (once they have all arrived), not one per connection.
        let logPath = supervisor.logPath(of: "up")!
        try await eventually("the bus says how many workers orders has") {
            ((try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "").contains("ride-bus: orders ready: 32 workers")
        }
        supervisor.signal("up", SIGINT)
        #expect(await supervisor.waitForExit("up", timeout: .seconds(20)) == 0)
        let log = try String(contentsOfFile: supervisor.logPath(of: "up")!, encoding: .utf8)
        #expect(log.contains("The platform is up: bus, users, tracking, trips, orders, notifications, gateway."))
        #expect(!log.contains("worker ready"))
        #expect(log.contains("tracking     | ") && log.contains("tracking stopped"))
        #expect(log.contains("bus          | ") && log.contains("bus stopped"), "the bus's log lines are prefixed; it stopped gracefully")
        #expect(log.contains("ridectl up: stopped"))
        #expect(FileManager.default.fileExists(atPath: "\(scratch)/data"), "the data directory is created")
        try? FileManager.default.removeItem(atPath: scratch)
    }

    /// Ctrl-C while the platform is still starting stops what was started at once, instead of once
    /// everything is up.
    @Test func aSignalDuringStartUpStopsAtOnce() async throws {
        let scratch = try makeScratchDirectory("up-early")
        // The real binaries, but ride-notifications serves /health on another port than the one `up`
        // waits for: the platform cannot finish starting before the signal (with every service as
        // `up` runs it, it sometimes did). The last --http given wins.
        let bin = "\(scratch)/bin"
        try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: true)
        for name in try FileManager.default.contentsOfDirectory(atPath: Binaries.directory)
        where name.hasPrefix("ride-") && name != "ride-notifications" {
            try FileManager.default.createSymbolicLink(atPath: "\(bin)/\(name)", withDestinationPath: "\(Binaries.directory)/\(name)")
        }
        let elsewhere = "127.0.0.1:\(9199 + Self.offset)"
        try "#!/bin/sh\nexec '\(Binaries.directory)/ride-notifications' \"$@\" --http \(elsewhere)\n"
            .write(toFile: "\(bin)/ride-notifications", atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: "\(bin)/ride-notifications")
        let supervisor = try startUp(scratch, binDirectory: bin)
        defer { supervisor.killAll() }
        #expect(await waitUntilHealthy("http://127.0.0.1:\(9100 + Self.offset)/health", timeout: .seconds(30)))
        supervisor.signal("up", SIGINT)
        #expect(await supervisor.waitForExit("up", timeout: .seconds(15)) == 0)
        let log = try String(contentsOfFile: supervisor.logPath(of: "up")!, encoding: .utf8)
        #expect(log.contains("ridectl up: interrupted while starting; stopping bus"), "\(log.suffix(2000))")
        #expect(!log.contains("The platform is up"))
        #expect(log.contains("bus stopped") && log.contains("ridectl up: stopped"))
        #expect(try await platformProcesses(scratch).isEmpty, "no process of this platform left")
        try? FileManager.default.removeItem(atPath: scratch)
    }

    /// `ridectl up` killed with SIGKILL cannot stop its children; they notice their parent is gone
    /// and stop themselves, so no orphan keeps the platform's ports.
    @Test func killingUpLeavesNoOrphans() async throws {
        let scratch = try makeScratchDirectory("up-killed")
        let supervisor = try startUp(scratch)
        defer { supervisor.killAll() }
        try await Self.waitForBanner(supervisor)
        let children = try await platformProcesses(scratch).compactMap { Int32($0) }
        #expect(children.count == 7)
        supervisor.signal("up", SIGKILL)
        do {
            // Asked of the kernel for each child (no pgrep: a program started now, while seven
            // processes exit on a loaded machine, was once not seen to end within a minute).
            try await eventually("every process of the platform stopped by itself", timeout: .seconds(60)) {
                children.allSatisfy { !Self.isRunning($0) }
            }
        } catch {
            // Say which ones linger and what they wrote once orphaned, then clear them away so the
            // next test on these ports is not failed by this one.
            let lingering = try await platformProcesses(scratch)
            let table = try await runCommand(
                "/usr/bin/ps", ["-o", "pid,ppid,stat,etime,wchan:24,args", "-p", lingering.joined(separator: ",")])
            let logs =
                (try? FileManager.default.contentsOfDirectory(atPath: "\(scratch)/data"))?.filter { $0.hasSuffix(".orphaned.log") } ?? []
            let written = logs.sorted().map {
                "\($0):\n" + ((try? String(contentsOfFile: "\(scratch)/data/\($0)", encoding: .utf8)) ?? "").suffix(2000)
            }
            for pid in lingering { if let pid = Int32(pid) { kill(pid, SIGKILL) } }
            try? await eventually("the lingering processes are gone", timeout: .seconds(30)) {
                try await platformProcesses(scratch).isEmpty
            }
            Issue.record("\(error)\n\(table.stdout)\n\(written.joined(separator: "\n"))")
            return
        }
        try? FileManager.default.removeItem(atPath: scratch)
    }

    /// Whether `pid` is a process that has not ended (a zombie, ended and not yet reaped, has).
    static func isRunning(_ pid: Int32) -> Bool {
        guard kill(pid, 0) == 0, let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8) else { return false }
        return stat.split(separator: ")").last?.split(separator: " ").first != "Z"
    }

    /// The pids of this platform's processes: the bus binds its ingress port, every other process
    /// reaches the bus through the Unix sockets under `scratch`.
    func platformProcesses(_ scratch: String) async throws -> [Substring] {
        let found = try await runCommand("/usr/bin/pgrep", ["-f", "/ride-[a-z]+ .*(:\(5555 + Self.offset)( |,|$)|\(scratch)/)"])
        return found.stdout.split(separator: "\n")
    }

    /// Waits until `ridectl up` says the platform is up (it has finished starting everything).
    static func waitForBanner(_ supervisor: ProcessSupervisor) async throws {
        // Generous: seven debug binaries starting while the rest of the suite runs on two cores.
        let deadline = ContinuousClock.now + .seconds(150)
        var log = ""
        while ContinuousClock.now < deadline {
            log = (try? String(contentsOfFile: supervisor.logPath(of: "up")!, encoding: .utf8)) ?? ""
            if log.contains("The platform is up") { return }
            try await Task.sleep(for: .milliseconds(20))
        }
        throw TestFailure("ridectl up did not say the platform is up within 150 s; its log ends:\n\(log.suffix(3000))")
    }

    @Test func aProcessThatDiesStopsThePlatformAndIsNamed() async throws {
        let scratch = try makeScratchDirectory("up-crash")
        let supervisor = try startUp(scratch)
        defer { supervisor.killAll() }
        try await Self.waitForBanner(supervisor)
        try await eventually("tracking is up too") {
            (try? await HTTPProbe.get("http://127.0.0.1:\(9104 + Self.offset)/health"))?.status == 200
        }
        let bus = try await runCommand("/usr/bin/pgrep", ["-f", "ride-bus --pub tcp://127.0.0.1:\(5555 + Self.offset)"])
        let pid = try #require(Int32(bus.stdout.split(separator: "\n").first ?? ""))
        kill(pid, SIGKILL)
        #expect(await supervisor.waitForExit("up", timeout: .seconds(20)) == 1)
        let log = try String(contentsOfFile: supervisor.logPath(of: "up")!, encoding: .utf8)
        #expect(
            log.contains("ridectl up: bus was killed by signal 9 (SIGKILL); stopping the platform (nothing is restarted silently)"),
            "\(log)")
        try? FileManager.default.removeItem(atPath: scratch)
    }
}

/// `ridectl up --tracking-shards 2`, with a simulation: longer than UpTests' limit, and on ports of its
/// own (16055–19704) so that it may run beside them.
@Suite(.timeLimit(.minutes(4))) struct UpTrackingShardsTests {
    static let offset = 10_500

    /// `--tracking-shards 2`: two tracking processes, each with its own ingest and health port; the
    /// simulator's drivers send to their own shard, dispatch finds them across both, rides complete.
    @Test func trackingShardsRunAsSeveralProcessesAndRidesComplete() async throws {
        let scratch = try makeScratchDirectory("up-shards")
        let supervisor = ProcessSupervisor(output: .files(directory: scratch))
        defer { supervisor.killAll() }
        try supervisor.start(
            name: "up", executable: Binaries.ridectl,
            arguments: [
                "up", "--tracking-shards", "2", "--port-offset", "\(Self.offset)", "--data-dir", "\(scratch)/data",
            ])
        try await UpTests.waitForBanner(supervisor)
        let ingest = "tcp://127.0.0.1:\(5558 + Self.offset),tcp://127.0.0.1:\(5658 + Self.offset)"
        let upLog = try String(contentsOfFile: supervisor.logPath(of: "up")!, encoding: .utf8)
        #expect(upLog.contains("The platform is up: bus, users, tracking, tracking-1, trips, orders, notifications, gateway."))
        #expect(upLog.contains("RIDE_TRACKING_INGEST=\(ingest)"), "the banner gives drivers both shards' ingest")
        let drivers = 8
        let simulation = try await runCommand(
            Binaries.ridectl,
            [
                "simulate", "--drivers", "\(drivers)", "--riders", "4", "--duration", "6", "--grace", "100", "--speedup", "6", "--box-km",
                "1",
                "--ingest", ingest, "--share-links", "", "--broker", "tcp://127.0.0.1:\(5557 + Self.offset)", "--sub",
                "tcp://127.0.0.1:\(5556 + Self.offset)",
            ], timeout: .seconds(150))
        #expect(simulation.status == 0, "\(simulation.stdout)\n\(simulation.stderr.suffix(2000))")
        let report = SimulationReport(text: simulation.stdout)
        #expect(report.met("rides stuck (open at the end)"), "\(simulation.stdout)")
        var devices = 0
        for (shard, port) in [(0, 9104), (1, 9204)] {
            // 30 s: a shard busy with the simulation's last batches on CI's load answered its /health late.
            let health = try JSONCoding.decode(
                JSONValue.self,
                from: Array(try await HTTPProbe.get("http://127.0.0.1:\(port + Self.offset)/health", timeout: .seconds(30)).body))
            #expect(health["details"]?["shard"]?.stringValue == "\(shard)/2")
            devices += Int(health["details"]?["devices"]?.numberValue ?? 0)
        }
        #expect(devices == drivers, "each driver kept by one shard")
        #expect(FileManager.default.fileExists(atPath: "\(scratch)/data/tracking-shard-1-of-2.sqlite"))
        supervisor.signal("up", SIGINT)
        #expect(await supervisor.waitForExit("up", timeout: .seconds(20)) == 0)
        try? FileManager.default.removeItem(atPath: scratch)
    }
}

/// `ridectl bench lifecycle`, briefly (the figures themselves are the benchmark's, not a test's):
/// what its report must hold to be read — the steady window's rate and each process's CPU per ride.
@Suite(.timeLimit(.minutes(3))) struct BenchLifecycleReportTests {
    @Test func theReportGivesTheWindowsRateAndEachProcesssCPUPerRide() async throws {
        let run = try await runCommand(
            Binaries.ridectl, ["bench", "lifecycle", "--concurrent", "2", "--seconds", "8"], timeout: .seconds(150))
        // Exit 1 is "a target missed" (a debug build on a busy machine misses them); anything else failed.
        #expect(run.status == 0 || run.status == 1, "\(run.stdout)\n\(run.stderr.suffix(2000))")
        let rows = run.stdout.split(separator: "\n").map(String.init)
        func row(_ measure: String) -> String? { rows.first { $0.hasPrefix(measure) } }
        // "completed rides per second, 2–8 s": the window's bounds as measured (a busy machine may wake the sampler late).
        let rate = try #require(row("completed rides per second, "), "\(run.stdout)\n\(run.stderr.suffix(2000))")
        #expect((Double(rate.split(separator: " ").dropFirst(6).first ?? "") ?? 0) > 0, "rides completed inside the window: \(rate)")
        #expect(row("rides stuck")?.contains("  0  ") == true, "\(run.stdout)")
        for process in ["ride-orders", "ride-trips", "ride-users", "ride-tracking", "ride-bus", "ridectl (this benchmark)"] {
            let line = try #require(row("  \(process)"), "a CPU row for \(process): \(run.stdout)")
            #expect(line.contains(" ms ") && line.contains("% of a core"), "\(line)")
        }
        #expect(row("CPU per ride in that window, all processes")?.contains("% busy") == true, "\(run.stdout)")
    }
}

/// `ridectl bench routes`, briefly: the built-in graph reaches the executable (its resource bundle
/// beside it) and every random pair routes.
@Suite(.timeLimit(.minutes(2))) struct BenchRoutesReportTests {
    @Test func theRoutesBenchRoutesEveryPairOnTheBuiltInGraph() async throws {
        let run = try await runCommand(Binaries.ridectl, ["bench", "routes", "--routes", "500"], timeout: .seconds(60))
        // Exit 1 is "a target missed" (the targets are for release builds); anything else failed.
        #expect(run.status == 0 || run.status == 1, "\(run.stdout)\n\(run.stderr.suffix(2000))")
        let rows = run.stdout.split(separator: "\n").map(String.init)
        #expect(rows.contains { $0.hasPrefix("pairs without a route") && $0.contains("  0  ") }, "\(run.stdout)")
        #expect(rows.contains { $0.hasPrefix("time per route, p50 / p99") }, "\(run.stdout)")
    }
}

/// `ridectl city synthetic` then `ridectl bench routes --city`, briefly: a metropolitan bundle (over
/// the hierarchy threshold) is routed on the hierarchy the bundle carries, against the 5 ms target.
@Suite(.timeLimit(.minutes(3))) struct BenchRoutesCityTests {
    @Test func aSyntheticCityIsRoutedOnItsHierarchy() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("bench-city-\(UUID().uuidString.prefix(8))").path
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let made = try await runCommand(
            Binaries.ridectl, ["city", "synthetic", "--edges", "25000", "--out", folder], timeout: .seconds(120))
        #expect(made.status == 0 && made.stdout.contains("shortcuts"), "\(made.stdout) \(made.stderr)")
        #expect(FileManager.default.fileExists(atPath: "\(folder)/hierarchy.bin"))
        let run = try await runCommand(Binaries.ridectl, ["bench", "routes", "--city", folder, "--routes", "300"], timeout: .seconds(120))
        #expect(run.status == 0 || run.status == 1, "\(run.stdout)\n\(run.stderr.suffix(2000))")
        let rows = run.stdout.split(separator: "\n").map(String.init)
        #expect(run.stdout.contains("contraction hierarchy") && run.stdout.contains("Synthetic"), "\(run.stdout)")
        #expect(rows.contains { $0.hasPrefix("pairs without a route") && $0.contains("  0  ") }, "\(run.stdout)")
        #expect(rows.contains { $0.hasPrefix("time per route, p50 / p99") && $0.contains("p99 ≤ 5.00 ms") }, "\(run.stdout)")
    }
}

/// `ridectl bench logins`, briefly, as JSON: the password hash of `ride-users` runs and is counted.
@Suite(.timeLimit(.minutes(2))) struct BenchLoginsReportTests {
    @Test func theLoginsBenchCountsHashesPerSecond() async throws {
        let run = try await runCommand(Binaries.ridectl, ["bench", "logins", "--seconds", "1", "--json"], timeout: .seconds(90))
        #expect(run.status == 0, "\(run.stdout)\n\(run.stderr.suffix(2000))")
        let report = try JSONCoding.decode(JSONValue.self, from: Array(run.stdout.utf8))
        let rows = report["rows"]?.arrayValue ?? []
        #expect(rows.count == 4, "\(run.stdout)")
        #expect(rows.first?["unit"] == "log-ins/s" && (rows.first?["value"]?.numberValue ?? 0) > 0, "\(run.stdout)")
    }
}

/// `ridectl bench gateway`, briefly, as JSON: both routes answered through a real gateway, none failed.
@Suite(.timeLimit(.minutes(3))) struct BenchGatewayReportTests {
    @Test func theGatewayBenchAnswersBothRoutes() async throws {
        let run = try await runCommand(
            Binaries.ridectl, ["bench", "gateway", "--seconds", "1", "--connections", "2", "--json"], timeout: .seconds(150))
        #expect(run.status == 0, "\(run.stdout)\n\(run.stderr.suffix(2000))")
        let report = try JSONCoding.decode(JSONValue.self, from: Array(run.stdout.utf8))
        let rows = report["rows"]?.arrayValue ?? []
        #expect(rows.count == 8, "two routes, four rows each, no failures: \(run.stdout)")
        for row in rows where row["unit"] == "req/s" { #expect((row["value"]?.numberValue ?? 0) > 0, "\(row)") }
    }
}

/// `ridectl bench bus-security`, one short round, as JSON: `bench bus` runs plain and then on a
/// CURVE bus whose load and echo workers are held to the `bench` role, and each compared figure
/// has both sides and the cost that the target reads.
@Suite(.timeLimit(.minutes(3))) struct BenchBusSecurityReportTests {
    @Test func theSecuredBusIsMeasuredBesideThePlainOne() async throws {
        let run = try await runCommand(
            Binaries.ridectl,
            ["bench", "bus-security", "--rounds", "1", "--seconds", "0.5", "--latency-requests", "100", "--requests", "2000", "--json"],
            timeout: .seconds(150))
        #expect(run.status == 0 || run.status == 1, "\(run.stdout)\n\(run.stderr.suffix(2000))")
        let report = try JSONCoding.decode(JSONValue.self, from: Array(run.stdout.utf8))
        let rows = report["rows"]?.arrayValue ?? []
        #expect(rows.count == 6, "events, p50 and pipelined, each over tcp and ipc: \(run.stdout)")
        for row in rows {
            let result = row["result"]?.stringValue ?? ""
            #expect(result.contains(" → ") && row["target"]?.stringValue?.hasPrefix("cost ≤ 15%: ") == true, "\(row)")
            #expect(row["met"] != nil, "\(row)")
        }
    }
}

/// `ridectl bench city`, a small city briefly, as JSON: every step's rows, rides that completed
/// with the fixes streaming, the platform's CPU per ride, and the verdict.
@Suite(.timeLimit(.minutes(3))) struct BenchCityReportTests {
    @Test func theReportJudgesEachStepAndNamesTheLargestCity() async throws {
        let run = try await runCommand(
            Binaries.ridectl,
            [
                "bench", "city", "--drivers", "600", "--rides-per-hour", "3600", "--steps", "0.5,1", "--step-seconds", "6", "--speedup",
                "240",
                "--json",
            ], timeout: .seconds(150))
        #expect(
            run.status == 0 || run.status == 1, "exit 1 is a missed target; anything else failed: \(run.stdout)\n\(run.stderr.suffix(2000))"
        )
        let report = try #require(
            try? JSONCoding.decode(JSONValue.self, from: Array(run.stdout.utf8)),
            "not a JSON report (exit \(run.status)): \(run.stdout)\n\(run.stderr.suffix(2000))")
        let rows = try #require(report["rows"]?.arrayValue, "\(run.stdout)")
        func row(_ prefix: String) -> JSONValue? { rows.first { $0["measure"]?.stringValue?.hasPrefix(prefix) == true } }
        #expect(
            row("50% — 300 drivers (75 fixes/s), 1800 rides/h") != nil && row("100% — 600 drivers (150 fixes/s), 3600 rides/h") != nil,
            "\(run.stdout)")
        // Each step's rides; on a loaded machine the first short step may start before riders book.
        let steps = rows.filter { $0["measure"]?.stringValue?.hasPrefix("  rides booked / completed / stuck") == true }.compactMap {
            $0["result"]?.stringValue
        }
        let counts = steps.map { $0.split(separator: "/").map { Int($0.trimmingCharacters(in: .whitespaces)) ?? -1 } }
        #expect(counts.count == 2 && counts.allSatisfy { $0.count == 3 && $0[2] == 0 }, "none stuck: \(steps)")
        #expect(counts.contains { $0.count == 3 && $0[1] > 0 }, "rides completed: \(steps)")
        let cpu = rows.filter { $0["measure"]?.stringValue?.hasPrefix("  CPU per completed ride, the platform") == true }
        #expect(cpu.contains { $0["unit"] == "ms" }, "a step with rides has its CPU per ride: \(run.stdout)")
        #expect(row("largest city carried") != nil, "\(run.stdout)")
    }
}
