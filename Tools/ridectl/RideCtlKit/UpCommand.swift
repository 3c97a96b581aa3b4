import ArgumentParser
import Bus
import Foundation
import PlatformLauncher
import ServiceKit
import SettingsKit
import Synchronization
import UnixSignals

struct UpCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "up",
        abstract: "Start the whole platform on this machine, as local processes, until Ctrl-C.",
        discussion: """
            Starts the bus and every service with embedded defaults (SQLite files under --data-dir), \
            prefixes and colours their logs; starts the bus first, then the rest together, and waits for each one's /health. \
            A process that exits on its own is never restarted silently: ridectl up says which one, \
            stops the rest and exits with status 1. Ctrl-C (SIGINT) or SIGTERM stops everything cleanly.
            """)

    @OptionGroup var bin: BinDirectoryOption

    @Option(name: Self.dataDirectoryKey.name, help: Self.dataDirectoryKey.help)
    var dataDirectory: String?
    static let dataDirectoryKey = ServiceSettingKeys.dataDirectory(holding: "Directory for the services' SQLite files")

    @Option(
        name: .customLong("port-offset"),
        help: "Add this to every port (bus 5555–5557, HTTP 9100…), to run a second platform beside the first.")
    var portOffset = 0

    @Option(
        help:
            "Run several instances of services on the same data directory, e.g. orders=3,trips=2 (users, orders, trips, notifications; each extra instance's health port is the first's + 100)."
    )
    var replicas = ""

    @Option(
        name: .customLong("tracking-shards"),
        help:
            "Run tracking as this many shards (1–8), splitting the devices by id: shard K is tracking-K (shard 0: tracking), its device ingest on 5558 + 100 × K and health on 9104 + 100 × K. Keep the number for a data directory."
    )
    var trackingShards = 1

    @Flag(
        help: "Once the platform is up, run `ridectl simulate` in it (10 drivers, 10 riders, 5× speed) until Ctrl-C, then print its report."
    )
    var simulate = false

    @Flag(
        help:
            "Encrypt and authenticate the bus and the device ingest with CURVE, with the keys in RIDE_CURVE_KEYS or else <data-dir>/keys (made there by `ridectl keys init` when missing)."
    )
    var secure = false

    @OptionGroup var listeningOptions: BusListeningOptions

    @Flag(
        help:
            "Collect every process's spans: run an OTLP/HTTP JSON collector in ridectl, point each process at it (OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_EXPORTER_OTLP_PROTOCOL=http/json) and append the spans to <data-dir>/spans.jsonl, for `ridectl trace ORDER_ID`."
    )
    var traces = false

    @Flag(
        name: .customLong("fake-stripe"),
        help:
            "Charge rides through a local fake of Stripe's API (in this process; every rider has a test card) instead of the ledger: ride-orders gets --payments stripe (docs/payments.md)."
    )
    var fakeStripe = false

    @Flag(
        name: .customLong("demo-accounts"), inversion: .prefixedNo,
        help:
            "Sign up a demo rider and a demo driver for the web apps (/app/rider, /app/driver) and print their phone numbers and passwords."
    )
    var demoAccounts = true

    static let tracesListenKey = SettingKey(
        "traces-listen", env: "RIDE_TRACES_LISTEN", default: "127.0.0.1:0",
        "Where the span collector of --traces listens (HOST:PORT; port 0: a free one)")
    @Option(name: Self.tracesListenKey.name, help: Self.tracesListenKey.help) var tracesListen: String?

    mutating func validate() throws {
        _ = try tracesAddress()
        _ = try listening()
        guard (0...50_000).contains(portOffset) else { throw ValidationError("--port-offset must be from 0 to 50000") }
        guard (1...8).contains(trackingShards) else {
            throw ValidationError("--tracking-shards must be from 1 to 8, got \(trackingShards)")
        }
        do {
            _ = try Platform.parseReplicas(replicas)
        } catch {
            throw ValidationError("--replicas: \(error)")
        }
    }

    func run() async throws {
        let bin = self.bin.path
        let data = Self.dataDirectoryKey.resolve(dataDirectory).value
        // Its user's alone: it holds the keys and the broker's Unix socket (docs/security.md#on-one-machine-the-buss-unix-sockets).
        try FileManager.default.createDirectory(atPath: data, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let signals = await UnixSignalsSequence(trapping: .sigint, .sigterm)
        let colored = Output.stdoutIsTerminal
        let supervisor = ProcessSupervisor(output: .prefixed(colored: colored))
        let listening = try listening()
        let processes = Platform.withReplicas(
            Platform.processes(
                binDirectory: bin, dataDirectory: data, portOffset: portOffset, trackingShards: trackingShards, listen: listening),
            try Platform.parseReplicas(replicas))
        var environment = ["RIDE_DATA_DIR": data, stopWithParentEnvironment: "1"]
        if try withValidation({ try listeningOptions.insecure() }) { environment[BusExposure.insecureEnvironment] = "1" }
        let keys = try curveKeys(dataDirectory: data)
        if let keys {
            environment[CurveOptions.directoryEnvironment] = keys
            try await CurveOptions(curveKeys: keys).secureRidectl()  // the simulation runs in this process
            Output.out(
                "ridectl up: the bus and the device ingest use CURVE, keys in \(keys) (export \(CurveOptions.directoryEnvironment)=\(keys) for ridectl tail/call)\n"
            )
        }

        var collection = traces ? try await startTraceCollection(dataDirectory: data) : nil
        if simulate { collection?.traceThisProcess() }
        if let collection { environment.merge(collection.environment) { _, collector in collector } }
        defer { if let collection { Task { await collection.stop() } } }
        let stripe = fakeStripe ? try await FakeStripeRun.start(dataDirectory: data, gatewayPort: 8080 + portOffset) : nil
        if let stripe {
            environment.merge(stripe.environment) { _, fake in fake }
            Output.out("ridectl up: rides are charged through a fake Stripe on http://127.0.0.1:\(stripe.port) (docs/payments.md)\n")
        }
        defer { if let stripe { Task { await stripe.stop() } } }

        // Signals are heard from now on, also while the platform starts: Ctrl-C during start-up stops
        // what was started at once instead of after everything is up.
        let (events, continuation) = AsyncStream<String>.makeStream()
        let interrupted = Interruption()
        Task {
            for await signal in signals {
                interrupted.note()
                continuation.yield("signal \(signal)")
            }
        }
        // The bus first (every other process connects to it), then the rest together: started one
        // after another, seven debug binaries took over 30 s to come up on a loaded 2-core machine.
        let waves = [Array(processes.prefix(1)), Array(processes.dropFirst())]
        for wave in waves {
            if interrupted.happened { break }
            let failures: [String]
            do {
                failures = try await supervisor.launch(wave, environment: environment, keepWaiting: { !interrupted.happened })
            } catch {
                Output.err("ridectl up: cannot start: \(error)\n")
                await supervisor.stopAll()
                throw ExitCode(1)
            }
            if interrupted.happened { break }
            guard failures.isEmpty else {
                Output.err("ridectl up: \(failures.joined(separator: "; ")); stopping the platform\n")
                await supervisor.stopAll()
                throw ExitCode(1)
            }
        }
        if interrupted.happened {
            Output.out("ridectl up: interrupted while starting; stopping \(supervisor.runningNames.joined(separator: ", "))…\n")
            await supervisor.stopAll()
            Output.out("ridectl up: stopped\n")
            return
        }
        let gateway = "http://localhost:\(8080 + portOffset)"
        var apps = ""
        if demoAccounts {
            if let problem = await DemoAccounts.signUp(gateway: gateway) {
                Output.err("ridectl up: \(problem) (the platform runs on)\n")
            } else {
                apps = DemoAccounts.banner(gateway: gateway) + "\n"
            }
        }
        let traceHint =
            collection.map {
                "\n  ridectl trace ORDER_ID    a ride's timeline, from the spans in \($0.path) (collector on port \($0.port))"
            } ?? ""
        let banner = """

            The platform is up: \(processes.map(\.name).joined(separator: ", ")).\(portOffset == 0 ? "" : " (ports shifted by \(portOffset): pass the same addresses to ridectl)")
              ridectl status          which services have workers
              ridectl tail            every event on the bus (ridectl tail order. for orders)
              ridectl call SVC OP     one request through the broker
            \(apps)  \(gateway)/dashboard    the operator dashboard; the apps' API is under /v1 (/openapi.json)
              RIDE_TRACKING_INGEST=\(Platform.trackingIngestEndpoints(shards: trackingShards, portOffset: portOffset).joined(separator: ","))    for drivers (TrackingSDK, ridectl simulate)\(traceHint)
            \(listening.banner(keys: keys))
            Ctrl-C stops everything.


            """
        Output.out(colored ? ANSI.bold(banner) : banner)
        let simulation = simulate ? startSimulation(dataDirectory: data) : nil

        // Whichever comes first: a signal (stop cleanly) or a process exiting on its own (stop, exit 1).
        Task {
            let exit = await supervisor.nextExit()
            if !exit.expected { continuation.yield("!\(exit)") }
        }
        var iterator = events.makeAsyncIterator()
        let first = await iterator.next()
        if let simulation {
            simulation.cancel()
            await simulation.value
        }
        if let first, first.hasPrefix("!") {
            Output.err("ridectl up: \(first.dropFirst()); stopping the platform (nothing is restarted silently)\n")
            await supervisor.stopAll()
            throw ExitCode(1)
        }
        Output.out("ridectl up: stopping \(supervisor.runningNames.joined(separator: ", "))…\n")
        await supervisor.stopAll()
        Output.out("ridectl up: stopped\n")
    }

    func tracesAddress() throws -> HostPort {
        try withValidation {
            try HostPort.parse(Self.tracesListenKey.resolve(tracesListen), name: "--traces-listen")
        }
    }

    /// Whether the bus and the ingest listen on this machine only or everywhere, checked against
    /// CURVE: asked for by `--secure` or a key directory in RIDE_CURVE_KEYS (`curveKeys`).
    func listening() throws -> BusListening {
        let keysInEnvironment = !(ProcessInfo.processInfo.environment[CurveOptions.directoryEnvironment] ?? "").isEmpty
        return try withValidation { try listeningOptions.listening(secure: secure || keysInEnvironment) }
    }

    /// `--traces`: the span collector, listening before any process starts.
    func startTraceCollection(dataDirectory: String) async throws -> TraceCollection {
        do {
            return try await TraceCollection.start(listen: try tracesAddress(), path: SpanFile.defaultPath(dataDirectory: dataDirectory))
        } catch {
            Output.err("ridectl up: --traces: \(error)\n")
            throw ExitCode(1)
        }
    }

    /// The key directory when CURVE is asked for (`--secure`, or RIDE_CURVE_KEYS already set), as an
    /// absolute path; made under the data directory when it is not there yet.
    func curveKeys(dataDirectory: String) throws -> String? {
        let fromEnvironment = ProcessInfo.processInfo.environment[CurveOptions.directoryEnvironment].flatMap { $0.isEmpty ? nil : $0 }
        guard secure || fromEnvironment != nil else { return nil }
        let keys = URL(fileURLWithPath: fromEnvironment ?? dataDirectory + "/keys").standardizedFileURL.path
        if !FileManager.default.fileExists(atPath: keys + "/server.pub") {
            do {
                try CurveKeyDirectory.create(at: keys)
            } catch let error as ConfigurationError {
                throw ValidationError("--secure: \(error.message)")
            }
        }
        return keys
    }

    /// The simulation against this platform, until cancelled; prints its report at the end.
    func startSimulation(dataDirectory: String) -> Task<Void, Never> {
        var settings = Simulation.Settings()
        settings.ingest = Platform.trackingIngestEndpoints(shards: trackingShards, portOffset: portOffset)
        settings.shareLinks = "http://localhost:\(8080 + portOffset)"
        let sockets = Platform.localBusSockets(dataDirectory: dataDirectory)
        let broker = sockets.map { "ipc://\($0.broker)" } ?? "tcp://127.0.0.1:\(5557 + portOffset)"
        let events = sockets.map { "ipc://\($0.egress)" } ?? "tcp://127.0.0.1:\(5556 + portOffset)"
        return Task {
            do {
                let report = try await SimulationRunner.run(settings: settings, broker: broker, events: events, duration: 0, grace: 0)
                Output.out(report.text)
            } catch {
                Output.err("ridectl up: the simulation stopped: \(error)\n")
            }
        }
    }
}

/// Whether Ctrl-C (or SIGTERM) came while the platform starts: set by the signal task, read by
/// every process's health wait.
final class Interruption: Sendable {
    private let flag = Atomic<Bool>(false)
    func note() { flag.store(true, ordering: .sequentiallyConsistent) }
    var happened: Bool { flag.load(ordering: .sequentiallyConsistent) }
}
