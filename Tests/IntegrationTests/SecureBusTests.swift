import Bus
import Foundation
import PlatformLauncher
import ServiceKit
import Synchronization
import Testing

/// `ridectl up --secure`: the bus and the device ingest speak CURVE, and the ZAP handler admits only
/// the keys in the key directory. Everything here runs as separate processes (ridectl call, tail,
/// publish, echo-worker, simulate), each with or without a key, as users and attackers would.
@Suite(.timeLimit(.minutes(8)), .serialized) struct SecureBusTests {
    /// Ports shifted into 14555–18106: clear of UpTests' (offset 10 000), of the free-port range
    /// tests use (20000–32767) and of Linux's ephemeral range.
    static let offset = 9_000
    var broker: String { "tcp://127.0.0.1:\(5557 + Self.offset)" }
    var egress: String { "tcp://127.0.0.1:\(5556 + Self.offset)" }
    var ingress: String { "tcp://127.0.0.1:\(5555 + Self.offset)" }
    var busHealth: String { "http://127.0.0.1:\(9100 + Self.offset)/health" }

    @Test func onlyAllowedKeysCallPublishSubscribeOrServeAndRidesStillComplete() async throws {
        let scratch = try makeScratchDirectory("secure")
        let supervisor = ProcessSupervisor(output: .files(directory: scratch))
        defer { supervisor.killAll() }
        try supervisor.start(
            name: "up", executable: Binaries.ridectl,
            arguments: ["up", "--secure", "--port-offset", "\(Self.offset)", "--data-dir", "\(scratch)/data"])
        try await UpTests.waitForBanner(supervisor)
        let upLog = { @Sendable in (try? String(contentsOfFile: supervisor.logPath(of: "up")!, encoding: .utf8)) ?? "" }
        let keys = "\(scratch)/data/keys"
        #expect(
            FileManager.default.fileExists(atPath: "\(keys)/server.key")
                && FileManager.default.fileExists(atPath: "\(keys)/clients/orders.key"))
        let secretMode = try FileManager.default.attributesOfItem(atPath: "\(keys)/clients/orders.key")[.posixPermissions] as? Int
        #expect(secretMode == 0o600, "secret keys are readable by their owner only")

        let member = ["RIDE_CURVE_KEYS": keys]
        // A key pair the platform never heard of, presented to the right server.
        let strangerKeys = "\(scratch)/stranger"
        try CurveKeyDirectory.create(at: strangerKeys, clients: ["operator"])
        let serverKey = try CurveKeyDirectory.readKey("\(keys)/server.pub", what: "server public key")
        let stranger = [
            "RIDE_CURVE_SERVER_KEY": serverKey,
            "RIDE_CURVE_SECRET_KEY": try CurveKeyDirectory.readKey("\(strangerKeys)/clients/operator.key", what: "stranger key"),
        ]
        let call = ["call", "users", "ping", "--broker", broker, "--attempts", "1", "--timeout-ms", "1500"]

        // Requests: the member is answered; a plain client and a stranger are not, and the bus says why.
        #expect(try await runCommand(Binaries.ridectl, call, environment: member).status == 0)
        let plain = try await runCommand(Binaries.ridectl, call)
        #expect(plain.status == 2 && plain.stderr.contains("CURVE"), "\(plain.stderr)")
        #expect(try await runCommand(Binaries.ridectl, call, environment: stranger).status == 2)
        try await eventually("the bus logs the refused key") { upLog().contains("CURVE client refused") }

        // Workers: a stranger cannot register a service; a member whose role serves it can (the
        // benchmarks' key serves `bench…`; docs/security.md#roles).
        try supervisor.start(
            name: "intruder", executable: Binaries.ridectl, arguments: ["echo-worker", "--broker", broker, "--service", "bench-intruder"],
            environment: stranger)
        try supervisor.start(
            name: "helper", executable: Binaries.ridectl, arguments: ["echo-worker", "--broker", broker, "--service", "bench-helper"],
            environment: member.merging([CurveOptions.clientEnvironment: "bench"]) { $1 })
        try await eventually("the member's worker registers") { try await workers("bench-helper") > 0 }
        try await Task.sleep(for: .seconds(2))  // two reconnect rounds of the intruder
        #expect(try await workers("bench-intruder") == 0, "a worker without an allowed key never registers")
        let echo = try await runCommand(
            Binaries.ridectl, ["call", "bench-helper", "echo", #"{"text":"hi"}"#, "--broker", broker], environment: member)
        #expect(echo.status == 0 && echo.stdout.contains("hi"))

        // Events: a member's tail hears a member's event, not a stranger's; a stranger's tail hears nothing.
        // The member's tail ends at the first event it hears. Under CI's load a tail took more than
        // 15 s to subscribe, so the member publishes until its tail has heard (pub/sub's slow
        // joiner: `--wait-ms` fails while nobody subscribes to the topic yet, which is no error here).
        let memberHeard = Mutex(false)
        let memberTail = Task {
            defer { memberHeard.withLock { $0 = true } }
            return try await runCommand(
                Binaries.ridectl, ["tail", "ops.secure.", "--json", "--count", "1", "--timeout", "60", "--sub", egress],
                environment: member, timeout: .seconds(70))
        }
        let strangerTail = Task {
            try await runCommand(
                Binaries.ridectl, ["tail", "ops.secure.", "--json", "--timeout", "12", "--sub", egress], environment: stranger,
                timeout: .seconds(30))
        }
        let strangerPublish = try await runCommand(
            Binaries.ridectl, ["publish", "ops.secure.forged", #"{"from":"stranger"}"#, "--pub", ingress, "--wait-ms", "3000"],
            environment: stranger)
        #expect(strangerPublish.status == 1, "never connected, so it never hears a subscriber: \(strangerPublish.stderr)")
        var memberPublishes: [Int32] = []
        while !memberHeard.withLock({ $0 }) {
            let memberPublish = try await runCommand(
                Binaries.ridectl, ["publish", "ops.secure.hello", #"{"from":"member"}"#, "--pub", ingress, "--wait-ms", "3000"],
                environment: member)
            memberPublishes.append(memberPublish.status)
            try await Task.sleep(for: .seconds(1))
        }
        #expect(memberPublishes.contains(0), "a member's publish heard the member's subscription: \(memberPublishes)")
        let heard = try await memberTail.value.stdout
        #expect(heard.contains(#""from":"member""#) && !heard.contains("stranger"), "\(heard)")
        #expect(try await strangerTail.value.stdout.isEmpty)

        // A client added to the directory (an operator: its name gives its role) is admitted at its
        // next connection, and shut out once its public key is deleted, without restarting anything.
        let added = try await runCommand(Binaries.ridectl, ["keys", "add", keys, "operator-newcomer"])
        #expect(added.status == 0, "\(added.stderr)")
        let newcomer = member.merging([
            "RIDE_CURVE_SECRET_KEY": try CurveKeyDirectory.readKey("\(keys)/clients/operator-newcomer.key", what: "newcomer key")
        ]) { $1 }
        #expect(try await runCommand(Binaries.ridectl, call, environment: newcomer).status == 0)
        try FileManager.default.removeItem(atPath: "\(keys)/clients/operator-newcomer.pub")
        #expect(try await runCommand(Binaries.ridectl, call, environment: newcomer).status == 2)

        // Rides run end to end over the secured bus and ingest (the simulator's phones connect with CURVE too).
        // A grace of 200 s: under CI's load a third ride waited 43 s for a free driver, then took 41 s
        // to be picked up, and was still on its way at 100 s (it ends as soon as every ride has).
        let simulation = try await runCommand(
            Binaries.ridectl,
            [
                "simulate", "--drivers", "3", "--riders", "3", "--duration", "6", "--grace", "200", "--speedup", "6", "--box-km", "1",
                "--ingest", "tcp://127.0.0.1:\(5558 + Self.offset)", "--share-links", "", "--broker", broker, "--sub", egress,
            ], environment: member, timeout: .seconds(260))
        #expect(simulation.status == 0, "\(simulation.stdout)\n\(simulation.stderr.suffix(2000))")
        let report = SimulationReport(text: simulation.stdout)
        #expect(report.met("rides stuck (open at the end)") && report.met("rides paid (drivers' earnings today)"), "\(simulation.stdout)")

        // A phone without a key cannot report locations: the device ingest is a CURVE server too.
        let plainDevices = try await runCommand(
            Binaries.ridectl,
            [
                "bench-devices", "--ingest", "tcp://127.0.0.1:\(5558 + Self.offset)",
                "--devices", "2", "--rate", "4", "--seconds", "3",
            ])
        #expect(plainDevices.stdout.contains(#""acked_batches":0,"#), "\(plainDevices.stdout)")
        supervisor.signal("up", SIGINT)
        #expect(await supervisor.waitForExit("up", timeout: .seconds(20)) == 0)
        try? FileManager.default.removeItem(atPath: scratch)
    }

    func workers(_ service: String) async throws -> Int { try await workerCount(service, busHealthURL: busHealth) }
}
