import ArgumentParser
import Bus
import Foundation
import PlatformLauncher
import ServiceKit
import SettingsKit
import ZeroMQ

struct BenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Measure the platform on this machine and print a table.",
        subcommands: [
            BenchBusCommand.self, BenchIngestCommand.self, BenchNearbyCommand.self, BenchMemoryCommand.self, BenchLifecycleCommand.self,
            BenchCityCommand.self,
            BenchRoutesCommand.self,
            BenchRoutesPgCommand.self, BenchLoginsCommand.self, BenchBusSecurityCommand.self, BenchGatewayCommand.self,
        ])
}

struct BenchBusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bus",
        abstract: "Events through ride-bus vs. libzmq's zmq_proxy, CloudEvents end to end, and 7/MDP latency and throughput.",
        discussion: """
            Starts the baseline proxy and ride-bus as real processes on free ports, one after the \
            other on the same ports, alternating for --rounds rounds (best round counts), then two \
            echo workers for the request measurements. Prints a table; exits 1 if a target is missed.
            """)

    /// The key (and role) of the load and the echo workers on a secured bus.
    static let benchClient = "bench"

    /// Names of the rows that `bench bus-security` reads back.
    enum Measure {
        static func cloudEvents(over transport: String) -> String { "CloudEvents JSON over \(transport) (encode → bus → decode)" }
        static func latencyP50(over transport: String) -> String { "MDP one client over \(transport), p50" }
        /// The start of the pipelined row's name (the rest says how many workers).
        static func pipelined(over transport: String) -> String { "MDP pipelined over \(transport)" }
    }

    @Option(help: "Seconds per event-throughput measurement.") var seconds = 3.0
    @Option(help: "Rounds of baseline vs. ride-bus.") var rounds = 2
    @Option(name: .customLong("latency-requests"), help: "Sequential requests for the latency figures.") var latencyRequests = 10_000
    @Option(help: "Requests for the pipelined throughput figure.") var requests = 200_000
    @Option(help: "Requests in flight at once when pipelining.") var inflight = 256
    @Option(name: .customLong("worker-concurrency"), help: "MDP connections per echo worker process.") var workerConcurrency = 32
    @Option(help: "Run only one part: events or requests.") var only: String?
    @Flag(
        help:
            "Secure the bus with CURVE (fresh keys; the load and the echo workers under the bench role) and measure through it; the raw comparison with zmq_proxy, which has no CURVE, is left out."
    )
    var curve = false
    @OptionGroup var format: BenchFormat
    @OptionGroup var processes: BusBenchProcesses

    mutating func validate() throws {
        if let only, !["events", "requests"].contains(only) { throw ValidationError("--only must be events or requests") }

        guard seconds > 0, rounds >= 1, latencyRequests >= 100, requests >= 1000, inflight >= 1, workerConcurrency >= 1 else {
            throw ValidationError("every count must be positive (latency-requests ≥ 100, requests ≥ 1000)")
        }
    }

    func run() async throws {
        let bin = processes.bin.path
        let logs = FileManager.default.temporaryDirectory.appendingPathComponent("ridectl-bench-\(getpid())").path
        try FileManager.default.createDirectory(atPath: logs, withIntermediateDirectories: true)
        let supervisor = ProcessSupervisor(output: .files(directory: logs))
        let (pub, sub, broker, http) = (try FreePort.next(), try FreePort.next(), try FreePort.next(), try FreePort.next())
        let ingress = "tcp://127.0.0.1:\(pub)"
        let egress = "tcp://127.0.0.1:\(sub)"
        // Events too go through TCP and through the bus's Unix sockets, as the platform's own processes send them.
        let (ingressIPC, egressIPC) = ("ipc://\(logs)/events-in.sock", "ipc://\(logs)/events-out.sock")
        // The broker listens on TCP and on a Unix socket; requests are measured over both.
        let brokerTCP = "tcp://127.0.0.1:\(broker)"
        let brokerIPC = "ipc://\(logs)/broker.sock"
        let me = "\(bin)/ridectl"
        let bus = PlatformCommands.bus(
            name: "ride-bus", binDirectory: bin, pub: "\(ingress),\(ingressIPC)", sub: "\(egress),\(egressIPC)",
            broker: "\(brokerTCP),\(brokerIPC)", http: "127.0.0.1:\(http)",
            extra: ["--log-level", "warning"] + processes.busFlags)
        Output.err("ridectl bench bus: logs of the processes in \(logs)/\n")

        var environment: [String: String] = [:]
        if curve {
            let keys = "\(logs)/keys"
            try CurveKeyDirectory.create(at: keys)
            environment[CurveOptions.directoryEnvironment] = keys
            // The load and its echo workers are the `bench` role: the bus holds them to it as to any key.
            environment[CurveOptions.clientEnvironment] = Self.benchClient
            try await CurveOptions(curveKeys: keys).secureRidectl(as: Self.benchClient)
        }
        let secured = curve ? ", bus secured with CURVE" : ""
        var table = BenchTable(
            bench: "bus", "libzmq \(Context.libraryVersion), 200-byte events, \(seconds) s per run, best of \(rounds)\(secured)"
        )
        let measureRaw = only != "requests" && !curve
        // ride-bus's figures the peer's stand beside: raw events, and MDP over tcp (p50, pipelined).
        var rideBusRaw: Double?
        var mdpOverTCP: (p50: Double, pipelined: Double)?
        do {
            // 1. Raw events: the C proxy and ride-bus, alternating on the same ports.
            var baseline = 0.0
            var ours = 0.0
            if !measureRaw {
                let failures = try await supervisor.launch([bus], environment: environment, timeout: .seconds(20))
                guard failures.isEmpty else { throw ConfigurationError(failures.joined(separator: "; ")) }
            }
            for round in 1...rounds where measureRaw {
                Output.err("round \(round)/\(rounds): zmq_proxy…\n")
                try supervisor.start(name: "zmq_proxy", executable: me, arguments: ["bench-proxy", "--pub", ingress, "--sub", egress])
                baseline = max(baseline, try RawEventLoad.measure(ingress: ingress, egress: egress, seconds: seconds))
                await supervisor.stop("zmq_proxy")
                Output.err("round \(round)/\(rounds): ride-bus…\n")
                let failures = try await supervisor.launch([bus], timeout: .seconds(20))
                guard failures.isEmpty else { throw ConfigurationError(failures.joined(separator: "; ")) }
                ours = max(ours, try RawEventLoad.measure(ingress: ingress, egress: egress, seconds: seconds))
                if round < rounds { await supervisor.stop("ride-bus") }
            }
            if measureRaw {
                rideBusRaw = ours
                let ratio = ours / baseline
                table.add("raw events, libzmq zmq_proxy (C baseline)", BenchTable.rate(baseline, "msg/s"), "")
                table.add(
                    "raw events, ride-bus", BenchTable.rate(ours, "msg/s"),
                    "≥ 90% of baseline: \(String(format: "%.1f", ratio * 100))%", met: ratio >= 0.9)
            }
            if only != "requests" {

                // 2. CloudEvents JSON, publisher to subscriber through ride-bus.
                for (transport, endpoints) in [("tcp", (ingress, egress)), ("ipc", (ingressIPC, egressIPC))] {
                    Output.err("CloudEvents end to end over \(transport)…\n")
                    let cloudEvents = try await CloudEventLoad.measure(ingress: endpoints.0, egress: endpoints.1, seconds: seconds)
                    table.add(Measure.cloudEvents(over: transport), BenchTable.rate(cloudEvents, "events/s"), "reported")
                }
            }
            if only == "events" {
                await supervisor.stopAll()
                try table.print(json: format.json)
                return
            }

            // 3. Requests through the broker to two echo workers, over TCP then over the Unix socket.
            let direct = try RequestLoad.directRoundTrip(requests: latencyRequests)
            table.add(
                "  (floor) direct REQ→REP over TCP, 2 hops, no broker, p50 / p99",
                "\(BenchTable.micros(direct.value(50))) / \(BenchTable.micros(direct.value(99)))", "reported")
            for (transport, endpoint) in [("tcp", brokerTCP), ("ipc", brokerIPC)] {
                for index in 1...2 {
                    try supervisor.start(
                        name: "worker-\(transport)-\(index)", executable: me,
                        arguments: ["echo-worker", "--broker", endpoint, "--concurrency", "\(workerConcurrency)"], environment: environment)
                }
                try await RequestLoad.waitForWorkers(
                    healthURL: "http://127.0.0.1:\(http)/health", service: "bench-echo", count: 2 * workerConcurrency)
                Output.err("MDP over \(transport): latency (\(latencyRequests) sequential requests)…\n")
                let latency = try await RequestLoad.latency(broker: endpoint, requests: latencyRequests)
                table.add(
                    Measure.latencyP50(over: transport), BenchTable.micros(latency.value(50)), "≤ 250 µs", met: latency.value(50) <= 250)
                table.add(
                    "MDP one client over \(transport), p99", BenchTable.micros(latency.value(99)), "≤ 1 ms", met: latency.value(99) <= 1000)
                let bound = try await RequestLoad.latency(broker: endpoint, requests: latencyRequests, onClientThread: true)
                table.add(
                    "MDP one client over \(transport), caller on the client's executor, p50 / p99",
                    "\(BenchTable.micros(bound.value(50))) / \(BenchTable.micros(bound.value(99)))", "≤ 250 µs / ≤ 1 ms",
                    met: bound.value(50) <= 250 && bound.value(99) <= 1000)
                let raw = try RequestLoad.rawLatency(broker: endpoint, requests: latencyRequests)
                table.add(
                    "  (diagnostic) blocking REQ client over \(transport), p50 / p99",
                    "\(BenchTable.micros(raw.value(50))) / \(BenchTable.micros(raw.value(99)))", "reported")
                Output.err("MDP over \(transport): pipelined (\(requests) requests, \(inflight) in flight)…\n")
                let throughput = try await RequestLoad.throughput(broker: endpoint, requests: requests, inflight: inflight)
                table.add(
                    "\(Measure.pipelined(over: transport)), 2 workers × \(workerConcurrency) connections",
                    BenchTable.rate(throughput, "req/s"),
                    "≥ 50 000 req/s", met: throughput >= 50_000)
                if transport == "tcp" { mdpOverTCP = (latency.value(50), throughput) }
                for index in 1...2 { await supervisor.stop("worker-\(transport)-\(index)") }
                try await RequestLoad.waitForWorkers(
                    healthURL: "http://127.0.0.1:\(http)/health", service: "bench-echo", count: 0, exactly: true)
            }
            // 4. The peer, on the same loads: NATS, which has no CURVE (left out with --curve).
            // A failure of the peer's is a row, not the end of ride-bus's figures.
            if !curve {
                await supervisor.stopAll()
                do {
                    try await NatsPeer.compare(
                        in: &table, logs: logs, rounds: rounds, seconds: seconds, rawEvents: rideBusRaw, requests: mdpOverTCP,
                        latencyRequests: latencyRequests, pipelined: only == "events" ? nil : (requests, inflight))
                } catch {
                    table.add("NATS, the peer", "failed: \(error)", "reported")
                }
            }
        } catch {
            await supervisor.stopAll()
            throw error
        }
        await supervisor.stopAll()
        try table.print(json: format.json)
    }
}
