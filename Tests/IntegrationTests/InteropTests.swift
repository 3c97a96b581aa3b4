import Bus
import Foundation
import PlatformLauncher
import ServiceKit
import Testing
import Wire

/// 7/MDP peers written independently, in Python with pyzmq (interop/mdp.py), against ours — and ours
/// against theirs. `make test` installs pyzmq; without it these tests fail and say so.
@Suite(.timeLimit(.minutes(5))) struct InteropTests {
    static let python = "/usr/bin/env"

    func requirePyzmq() async throws {
        // Python starting on CI's loaded two cores has taken over a minute.
        let check = try await runCommand(Self.python, ["python3", "-c", "import zmq"], timeout: .seconds(180))
        guard check.status == 0 else {
            throw TestFailure(
                "pyzmq is missing: `make test-deps` installs it in .build/python, which make puts first on PATH (docs/contributing.md)")
        }
    }

    @Test func aPythonClientTalksToOurWorkerThroughRideBus() async throws {
        try await requirePyzmq()
        try await withTestBus("py-client") { bus in
            try bus.startEchoWorker("worker")
            try await bus.waitForWorkers("echo")
            let reply = try await runCommand(
                Self.python, ["python3", Binaries.interopScript, "client", bus.broker, "echo", "echo\n" + #"{"text":"from python"}"#])
            #expect(reply.status == 0, "\(reply.stderr)")
            let frames = try JSONCoding.decode([String].self, from: Array(reply.stdout.utf8))
            #expect(frames == ["200\n" + #"{"text":"from python"}"#])
            let mmi = try await runCommand(Self.python, ["python3", Binaries.interopScript, "client", bus.broker, "mmi.service", "echo"])
            #expect(try JSONCoding.decode([String].self, from: Array(mmi.stdout.utf8)) == ["200"])
            let missing = try await runCommand(
                Self.python, ["python3", Binaries.interopScript, "client", bus.broker, "mmi.service", "nobody"])
            #expect(try JSONCoding.decode([String].self, from: Array(missing.stdout.utf8)) == ["404"])
        }
    }

    @Test func ourClientTalksToAPythonWorkerThroughRideBus() async throws {
        try await requirePyzmq()
        try await withTestBus("py-worker") { bus in
            try bus.supervisor.start(
                name: "python-worker", executable: Self.python,
                arguments: ["python3", "-u", Binaries.interopScript, "worker", bus.broker, "py"])
            try await bus.waitForWorkers("py")
            let client = try await bus.client()
            let reply = try await client.call("py", "lookup", ["id": "42"] as JSONValue, as: JSONValue.self)
            #expect(reply == ["from": "python", "op": "lookup", "params": ["id": "42"]])
            await client.close()
        }
    }

    /// ride-bus says on every connection that it reads messages packed into one frame
    /// (docs/design.md#one-frame-requests): our client and worker then pack each request and reply,
    /// while the Python peers, which never heard of it, keep the RFC's frames and are answered in them.
    @Test func ourPeersPackWhatTheBusSaysItReadsAndPythonPeersKeepTheRFCsFrames() async throws {
        try await requirePyzmq()
        try await withTestBus("packed") { bus in
            try bus.startEchoWorker("worker")
            try bus.supervisor.start(
                name: "python-worker", executable: Self.python,
                arguments: ["python3", "-u", Binaries.interopScript, "worker", bus.broker, "py"])
            try await bus.waitForWorkers("echo")
            try await bus.waitForWorkers("py")
            let client = try await bus.client(timeout: .seconds(30))
            struct Echo: Codable, Equatable { var text: String }
            // The client's first request learns from its reply what the bus reads.
            #expect(try await client.call("echo", "echo", Echo(text: "first"), as: Echo.self) == Echo(text: "first"))
            let start = try await settledPackedCount(bus)
            for i in 0..<10 {
                #expect(try await client.call("echo", "echo", Echo(text: "\(i)"), as: Echo.self) == Echo(text: "\(i)"))
            }
            #expect(try await settledPackedCount(bus) == start + 20, "each of our requests and each of our worker's replies in one frame")
            let reply = try await runCommand(
                Self.python, ["python3", Binaries.interopScript, "client", bus.broker, "echo", "echo\n" + #"{"text":"python"}"#])
            #expect(try JSONCoding.decode([String].self, from: Array(reply.stdout.utf8)) == ["200\n" + #"{"text":"python"}"#])
            #expect(
                try await settledPackedCount(bus) == start + 21,
                "the Python client's request in the RFC's frames, our worker's reply packed")
            for i in 0..<5 {
                let answer = try await client.call("py", "lookup", ["id": .string("\(i)")] as JSONValue, as: JSONValue.self)
                #expect(answer["from"] == "python")
            }
            #expect(try await settledPackedCount(bus) == start + 26, "our requests packed, the Python worker's replies in the RFC's frames")
            await client.close()
        }
    }

    /// The bus's count of packed messages once it stops moving (it refreshes it several times a second).
    func settledPackedCount(_ bus: TestBus) async throws -> Double {
        var last = try await bus.metric("ride_bus_packed_messages_total") ?? 0
        let deadline = ContinuousClock.now + .seconds(20)
        while ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(300))
            let now = try await bus.metric("ride_bus_packed_messages_total") ?? 0
            if now == last { return now }
            last = now
        }
        throw TestFailure("ride_bus_packed_messages_total still moving after 20 s: \(last)")
    }

    @Test func ourClientAndWorkerTalkThroughAPythonBroker() async throws {
        try await requirePyzmq()
        let scratch = try makeScratchDirectory("py-broker")
        let supervisor = ProcessSupervisor(output: .files(directory: scratch))
        defer { supervisor.killAll() }
        let endpoint = "tcp://127.0.0.1:\(try FreePort.next())"
        try supervisor.start(
            name: "python-broker", executable: Self.python, arguments: ["python3", "-u", Binaries.interopScript, "broker", endpoint])
        try supervisor.start(
            name: "worker", executable: Binaries.ridectl,
            arguments: ["echo-worker", "--broker", endpoint, "--service", "echo", "--concurrency", "2"])
        // Each call waits as long as the suite's load may keep a reply: this checks the protocol, not speed.
        var options = MDPClient.Options()
        options.timeout = .seconds(60)
        options.attempts = 1
        let client = try await ServiceClient(broker: endpoint, options: options, logger: testLogger)
        let deadline = ContinuousClock.now + .seconds(120)
        while (try? await client.hasWorkers("echo")) != true {
            guard ContinuousClock.now < deadline else { throw TestFailure("our worker did not register with the Python broker in 120 s") }
            try await Task.sleep(for: .milliseconds(50))
        }
        struct Echo: Codable, Equatable { var text: String }
        for i in 0..<20 {
            #expect(try await client.call("echo", "echo", Echo(text: "\(i)"), as: Echo.self) == Echo(text: "\(i)"))
        }
        // Past one heartbeat cycle the worker is still registered: heartbeats work both ways.
        try await Task.sleep(for: .seconds(3))
        #expect(try await client.call("echo", "echo", Echo(text: "later"), as: Echo.self) == Echo(text: "later"))
        await client.close()
        await supervisor.stopAll(grace: .seconds(3))
        try? FileManager.default.removeItem(atPath: scratch)
    }
}
