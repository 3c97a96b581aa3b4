import Bus
import Foundation
import PlatformLauncher
import ServiceKit
import Testing
import Wire

/// The broker in a real `ride-bus`, with workers as real processes (`ridectl echo-worker`).
@Suite(.timeLimit(.minutes(2))) struct BrokerIntegrationTests {
    struct Echo: Codable, Sendable, Equatable { var text: String }

    @Test func aRequestGoesThroughTheBrokerToAWorkerAndBack() async throws {
        try await withTestBus("request") { bus in
            try bus.startEchoWorker("worker")
            try await bus.waitForWorkers("echo")
            let client = try await bus.client()
            let echoed = try await client.call("echo", "echo", Echo(text: "hello"), as: Echo.self)
            #expect(echoed == Echo(text: "hello"))
            let refused = try await client.callRaw("echo", "no-such-op", json: Array("{}".utf8))
            #expect(refused.status == 404)
            #expect(refused.serviceError?.code == "unknown_op")
            await client.close()
        }
    }

    @Test func theBrokerServesTCPAndAUnixSocketAtOnce() async throws {
        let socketPath = FileManager.default.temporaryDirectory.appendingPathComponent("ride-it-\(UUID().uuidString.prefix(8)).sock").path
        let brokerPort = try FreePort.next()
        try await withTestBus("ipc", extraArguments: ["--broker", "tcp://127.0.0.1:\(brokerPort),ipc://\(socketPath)"]) { bus in
            // The worker comes in over the Unix socket, the client over TCP: one broker, one service.
            try bus.supervisor.start(
                name: "worker", executable: Binaries.ridectl,
                arguments: [
                    "echo-worker", "--broker", "ipc://\(socketPath)", "--service", "echo", "--concurrency", "2",
                ])
            var options = MDPClient.Options()
            options.timeout = .seconds(2)
            let client = try await ServiceClient(broker: "tcp://127.0.0.1:\(brokerPort)", options: options, logger: testLogger)
            let deadline = ContinuousClock.now + .seconds(20)
            while (try? await client.hasWorkers("echo")) != true {
                try #require(ContinuousClock.now < deadline, "the worker over the Unix socket never registered")
                try await Task.sleep(for: .milliseconds(20))
            }
            #expect(
                try await client.call("echo", "echo", Echo(text: "across transports"), as: Echo.self) == Echo(text: "across transports"))
            await client.close()
        }
        try? FileManager.default.removeItem(atPath: socketPath)
    }

    @Test func mmiServiceAnswers200And404() async throws {
        try await withTestBus("mmi") { bus in
            let client = try await bus.client()
            #expect(try await !client.hasWorkers("echo"))
            try bus.startEchoWorker("worker")
            try await bus.waitForWorkers("echo")
            #expect(try await client.hasWorkers("echo"))
            #expect(try await !client.hasWorkers("users"))
            let unknown = try await client.mdp.request(service: "mmi.nothing", body: [])
            #expect(unknown.first?.utf8String == "501")
            await client.close()
        }
    }

    @Test func twoWorkersShareTheLoad() async throws {
        try await withTestBus("share") { bus in
            try bus.startEchoWorker("worker-a", concurrency: 1)
            try bus.startEchoWorker("worker-b", concurrency: 1)
            let deadline = ContinuousClock.now + .seconds(20)
            while try await bus.workerCount("echo") < 2 {
                #expect(ContinuousClock.now < deadline, "two workers registered")
                try await Task.sleep(for: .milliseconds(20))
            }
            let client = try await bus.client()
            var instances: [String: Int] = [:]
            for _ in 0..<20 {
                let ping = try await client.call("echo", "ping", NoParams(), as: PingReply.self)
                instances[ping.instance, default: 0] += 1
            }
            #expect(instances.count == 2, "both workers answered: \(instances)")
            #expect(instances.values.allSatisfy { $0 >= 5 }, "the broker spreads requests: \(instances)")
            await client.close()
        }
    }

    @Test func aKilledWorkerIsExpiredAndANewOneServesItsRequests() async throws {
        // Short heartbeats so expiry takes a fraction of a second, not 7.5 s.
        try await withTestBus("sigkill", extraArguments: ["--heartbeat-ms", "100", "--liveness", "3"]) { bus in
            try bus.startEchoWorker("worker-1", concurrency: 1, heartbeatMilliseconds: 100)
            try await bus.waitForWorkers("echo")
            bus.supervisor.signal("worker-1", SIGKILL)
            // Generous: a loaded machine (CI) reaps the killed process and runs this task late.
            #expect(await bus.supervisor.waitForExit("worker-1", timeout: .seconds(30)) != nil)
            try await bus.waitForWorkers("echo", present: false, timeout: .seconds(30))

            // A request sent now waits for a worker; the one started next answers it.
            let client = try await bus.client(timeout: .seconds(10))
            let pending = Task { try await client.call("echo", "echo", Echo(text: "after the crash"), as: Echo.self) }
            try await Task.sleep(for: .milliseconds(100))
            try bus.startEchoWorker("worker-2", concurrency: 1, heartbeatMilliseconds: 100)
            #expect(try await pending.value == Echo(text: "after the crash"))
            #expect(try await client.hasWorkers("echo"))
            await client.close()
        }
    }

    /// A 7/MDP worker of `echo` in raw pyzmq, nothing of ours: connected, READY sent, then `loop`
    /// (Python; `s` is its DEALER socket).
    func startRawWorker(_ bus: TestBus, name: String, _ loop: String) throws {
        let connect = """
            import zmq, time
            s = zmq.Context().socket(zmq.DEALER); s.connect("\(bus.broker)")
            s.send_multipart([b"", b"MDPW01", b"\\x01", b"echo"])
            """
        try bus.supervisor.start(name: name, executable: "/usr/bin/env", arguments: ["python3", "-c", connect + "\n" + loop])
    }

    @Test func aWorkerKilledInTheMiddleOfARequestLosesItToAnother() async throws {
        try await withTestBus("requeue") { bus in
            // A worker (raw pyzmq) that takes the request and never answers; it is killed holding it.
            try startRawWorker(
                bus, name: "python-stuck",
                """
                # Heartbeats both ways until the request comes, then only ours: alive, never answering.
                while not (s.poll(1000) and s.recv_multipart()[2] == b"\\x02"):
                    s.send_multipart([b"", b"MDPW01", b"\\x04"])
                while True:
                    time.sleep(1); s.send_multipart([b"", b"MDPW01", b"\\x04"])
                """)
            try await bus.waitForWorkers("echo")
            // Room for starting the live worker on a loaded machine: the request waits for it.
            let client = try await bus.client(timeout: .seconds(30))
            let pending = Task { try await client.call("echo", "echo", Echo(text: "requeued"), as: Echo.self) }
            // Wait until the stuck worker holds the request (it is no longer idle), then kill it.
            let deadline = ContinuousClock.now + .seconds(30)
            while true {
                let health = try JSONCoding.decode(JSONValue.self, from: Array(try await HTTPProbe.get(bus.healthURL).body))
                let echo = health["details"]?["services"]?["echo"]
                if echo?["workers"]?.numberValue == 1, echo?["idle"]?.numberValue == 0 { break }
                try #require(ContinuousClock.now < deadline, "the stuck worker never held the request: \(String(describing: echo))")
                try await Task.sleep(for: .milliseconds(20))
            }
            try bus.startEchoWorker("worker-live", concurrency: 1)
            try await Task.sleep(for: .milliseconds(300))
            bus.supervisor.signal("python-stuck", SIGKILL)
            #expect(try await pending.value == Echo(text: "requeued"))
            #expect(try await bus.waitForMetric("ride_bus_requeued_requests_total", atLeast: 1) == 1)
            await client.close()
        }
    }

    /// A worker (raw pyzmq, as an attacker holding a serving key would write it) answers the request
    /// it holds to another client's id: nobody gets that reply, the broker tells the worker to go,
    /// and the request is answered by the next worker.
    @Test func aReplyAddressedToAnotherClientReachesNobodyAndTheNextWorkerAnswers() async throws {
        try await withTestBus("forged-reply") { bus in
            try startRawWorker(
                bus, name: "python-forger",
                """
                while True:
                    frames = s.recv_multipart()
                    if frames[2] == b"\\x02":
                        s.send_multipart([b"", b"MDPW01", b"\\x03", b"\\x00forged", b""] + frames[5:])
                    elif frames[2] == b"\\x05":
                        time.sleep(60)
                """)
            try await bus.waitForWorkers("echo")
            let client = try await bus.client(timeout: .seconds(30))
            let pending = Task { try await client.call("echo", "echo", Echo(text: "mine"), as: Echo.self) }
            #expect(try await bus.waitForMetric("ride_bus_rejected_messages_total{socket=\"broker\"}", atLeast: 1) >= 1)
            try bus.startEchoWorker("worker-live", concurrency: 1)
            #expect(try await pending.value == Echo(text: "mine"))
            #expect(bus.log.contains("REPLY to another client than its request's"))
            await client.close()
        }
    }
}
