import Bus
import Foundation
import Logging
import PlatformLauncher
import ServiceKit
import Synchronization
import TestProcess
import Testing
import Wire
import ZeroMQ

let testLogger: Logger = {
    var logger = Logger(label: "integration-test")
    logger.logLevel = .critical
    return logger
}()

/// The built executables (`ride-bus`, `ridectl`): `RIDE_BIN_DIR`, else next to the test bundle.
enum Binaries {
    static let directory: String = {
        if let env = ProcessInfo.processInfo.environment["RIDE_BIN_DIR"], !env.isEmpty { return env }
        var candidate = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for _ in 0..<4 {
            if FileManager.default.isExecutableFile(atPath: candidate.appendingPathComponent("ride-bus").path) { return candidate.path }
            candidate = candidate.deletingLastPathComponent()
        }
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        return root.appendingPathComponent(".build/debug").path
    }()

    static var rideBus: String { "\(directory)/ride-bus" }
    static var ridectl: String { "\(directory)/ridectl" }
    static var interopScript: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("interop/mdp.py").path
    }
    /// The host harness's delay line, for kernels without tc netem.
    static var delayLineScript: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Hosts/delayline.py").path
    }
}

/// A temporary directory for one test's logs and data, removed afterwards unless the test failed.
func makeScratchDirectory(_ name: String) throws -> String {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("ride-it-\(name)-\(UUID().uuidString.prefix(8))").path
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    return path
}

/// A real `ride-bus` process on free ports, with its own log directory.
struct TestBus: Sendable {
    let supervisor: ProcessSupervisor
    let scratch: String
    let pubPort: Int
    let subPort: Int
    let brokerPort: Int
    let httpPort: Int
    /// Variables every service and gateway started beside this bus gets (OTEL_* for the tracing test).
    var environment: [String: String] = [:]
    /// The host each process runs on, by process name (`bus`, `users`, …); the loopback when absent.
    var placement: [String: TestHost] = [:]
    /// The bus's instances, by process name: `bus`, and `bus-2` for a bus with no single point of
    /// failure. Each on its own host (the same ports at another address).
    var instances: [String] = ["bus"]

    func host(of process: String) -> TestHost { placement[process] ?? .loopback }
    /// The first instance's address (its /health and /metrics are the ones tests read).
    var address: String { host(of: "bus").address }

    /// The bus address (`BusAddress`) of every instance's `port`.
    private func each(_ port: Int) -> String { instances.map { "tcp://\(host(of: $0).address):\(port)" }.joined(separator: ",") }
    var ingress: String { each(pubPort) }
    var egress: String { each(subPort) }
    var broker: String { each(brokerPort) }
    var healthURL: String { "http://\(address):\(httpPort)/health" }
    var metricsURL: String { "http://\(address):\(httpPort)/metrics" }

    /// What a service started beside this bus is told of it.
    var endpoints: BusEndpoints { BusEndpoints(ingress: ingress, egress: egress, broker: broker) }

    /// Flags that point a ridectl command at this bus.
    var ridectlFlags: [String] { ["--sub", egress, "--broker", broker, "--bus-http", "http://\(address):\(httpPort)"] }

    var log: String { (try? String(contentsOfFile: supervisor.logPath(of: "bus")!, encoding: .utf8)) ?? "" }
    /// Where the services started beside this bus keep their data, one folder each.
    var dataRoot: String { "\(scratch)/data" }

    static func start(
        _ name: String, extraArguments: [String] = [], environment: [String: String] = [:], placement: [String: TestHost] = [:],
        instances: [String] = ["bus"]
    ) async throws -> TestBus {
        let scratch = try makeScratchDirectory(name)
        let bus = TestBus(
            supervisor: ProcessSupervisor(output: .files(directory: scratch)), scratch: scratch,
            pubPort: try FreePort.next(), subPort: try FreePort.next(), brokerPort: try FreePort.next(), httpPort: try FreePort.next(),
            environment: environment, placement: placement, instances: instances)
        for instance in instances { try await bus.startProcess(instance, extraArguments: extraArguments) }
        return bus
    }

    /// Starts the instance `name` (`bus` unless the bus has several).
    func startProcess(_ name: String = "bus", extraArguments: [String] = []) async throws {
        let address = host(of: name).address
        let process = PlatformCommands.bus(
            name: name, binDirectory: Binaries.directory, pub: "tcp://\(address):\(pubPort)", sub: "tcp://\(address):\(subPort)",
            broker: "tcp://\(address):\(brokerPort)", http: "\(address):\(httpPort)", extra: ["--log-level", "debug"] + extraArguments)
        // Of the variables the services get, the bus takes only its CURVE keys (not OTEL_*: the
        // tracing tests count the services' spans).
        let failures = try await supervisor.launch(
            [host(of: name).wrap(process)], environment: environment.filter { $0.key.hasPrefix("RIDE_CURVE") })
        guard failures.isEmpty else { throw TestFailure("\(name): \(failures.joined(separator: "; ")); log:\n\(log)") }
    }

    /// Starts `ridectl echo-worker` processes registered as `service`.
    func startEchoWorker(_ name: String, service: String = "echo", concurrency: Int = 2, heartbeatMilliseconds: Int = 2500) throws {
        try supervisor.start(
            name: name, executable: Binaries.ridectl,
            arguments: [
                "echo-worker", "--broker", broker, "--service", service, "--concurrency", "\(concurrency)",
                "--heartbeat-ms", "\(heartbeatMilliseconds)",
            ])
    }

    func client(timeout: Duration = .seconds(2), attempts: Int = 1) async throws -> ServiceClient {
        var options = MDPClient.Options()
        options.timeout = timeout
        options.attempts = attempts
        return try await ServiceClient(broker: broker, options: options, logger: testLogger)
    }

    /// Asks mmi.service until it answers `expected` (workers registered or gone), up to `timeout`.
    func waitForWorkers(_ service: String, present expected: Bool = true, timeout: Duration = .seconds(20)) async throws {
        let client = try await client(timeout: .milliseconds(500))
        defer { Task { await client.close() } }
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if (try? await client.hasWorkers(service)) == expected { return }
            try await Task.sleep(for: .milliseconds(20))
        }
        throw TestFailure("mmi.service \(service) did not become \(expected ? 200 : 404) within \(timeout)")
    }

    /// Workers of `service` the bus reports in /health.
    func workerCount(_ service: String) async throws -> Int { try await IntegrationTests.workerCount(service, busHealthURL: healthURL) }

    /// The value of one metric line (`name{labels} value`) from /metrics.
    func metric(_ line: String) async throws -> Double? {
        let text = try await HTTPProbe.get(metricsURL).text
        for row in text.split(separator: "\n") where row.hasPrefix(line + " ") {
            return Double(row.split(separator: " ").last!)
        }
        return nil
    }

    /// Waits until a metric reaches `value` (the bus refreshes its counts several times a second).
    func waitForMetric(_ line: String, atLeast value: Double, timeout: Duration = .seconds(5)) async throws -> Double {
        let deadline = ContinuousClock.now + timeout
        var last = 0.0
        while ContinuousClock.now < deadline {
            last = try await metric(line) ?? 0
            if last >= value { return last }
            try await Task.sleep(for: .milliseconds(20))
        }
        return last
    }

    func stop() async {
        await supervisor.stopAll(grace: .seconds(5))
        try? FileManager.default.removeItem(atPath: scratch)
    }
}

/// Workers of `service` a bus reports in its /health.
func workerCount(_ service: String, busHealthURL: String) async throws -> Int {
    let health = try JSONCoding.decode(JSONValue.self, from: Array(try await HTTPProbe.get(busHealthURL).body))
    return Int(health["details"]?["services"]?[service]?["workers"]?.numberValue ?? 0)
}

/// Runs `body` with a fresh bus; the bus and everything started beside it is stopped afterwards,
/// and killed if the body failed.
func withTestBus(
    _ name: String, extraArguments: [String] = [], environment: [String: String] = [:], placement: [String: TestHost] = [:],
    instances: [String] = ["bus"], _ body: (TestBus) async throws -> Void
) async throws {
    let bus = try await TestBus.start(
        name, extraArguments: extraArguments, environment: environment, placement: placement, instances: instances)
    do {
        try await body(bus)
    } catch {
        bus.supervisor.killAll()
        throw TestFailure("\(error)\n--- bus log (\(bus.scratch)) ---\n\(bus.log.suffix(4000))")
    }
    await bus.stop()
}

struct TestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Runs a command to completion; returns its exit status, standard output and standard error
/// (`TestProcess`: the end learnt from the kernel, output through files, no thread held).
func runCommand(
    _ executable: String, _ arguments: [String], environment: [String: String] = [:], inheritEnvironment: Bool = true,
    stdin: String? = nil, timeout: Duration = .seconds(60)
) async throws -> (status: Int32, stdout: String, stderr: String) {
    let base =
        inheritEnvironment ? ProcessInfo.processInfo.environment : ["PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"]
    do {
        let outcome = try await TestProcess.run(
            executable, arguments, environment: base.merging(environment) { _, new in new }, stdin: stdin, timeout: timeout)
        return (outcome.status, outcome.stdout, outcome.stderr)
    } catch let timedOut as TestProcess.TimedOut {
        throw TestFailure(timedOut.description)
    }
}

/// The first `count` events a subscriber receives (of `topic`, when given), or a failure after `timeout`.
func collect<P>(_ subscriber: EventSubscriber<P>, count: Int, topic: String? = nil, timeout: Duration = .seconds(30)) async throws
    -> [ReceivedEvent<P>]
{
    try await withThrowingTaskGroup(of: [ReceivedEvent<P>].self) { group in
        group.addTask {
            var events: [ReceivedEvent<P>] = []
            for await batch in subscriber.deliveries {
                for case .event(let event) in batch where topic == nil || event.topic == topic { events.append(event) }
                if events.count >= count { break }
            }
            return events
        }
        group.addTask {
            try await Task.sleep(for: timeout)
            throw TestFailure("fewer than \(count) events within \(timeout)")
        }
        let result = try await group.next()!
        group.cancelAll()
        return result
    }
}

/// The first event a subscriber receives that satisfies `condition`, or a failure after `timeout`.
func firstEvent<P>(_ subscriber: EventSubscriber<P>, timeout: Duration, where condition: @escaping @Sendable (P) -> Bool) async throws
    -> ReceivedEvent<P>
{
    try await withThrowingTaskGroup(of: ReceivedEvent<P>?.self) { group in
        group.addTask {
            for await batch in subscriber.deliveries {
                for case .event(let event) in batch where condition(event.event.data) { return event }
            }
            return nil
        }
        group.addTask {
            try await Task.sleep(for: timeout)
            throw TestFailure("no matching event within \(timeout)")
        }
        defer { group.cancelAll() }
        guard let event = try await group.next()! else { throw TestFailure("the subscriber closed before a matching event") }
        return event
    }
}
