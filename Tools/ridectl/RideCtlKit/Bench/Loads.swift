import Bus
import Foundation
import PlatformLauncher
import RideContract
import RideModels
import ServiceKit
import SettingsKit
import Synchronization
import Wire
import ZeroMQ

/// 200-byte events from a PUB thread to a SUB thread through whatever forwards between `ingress`
/// and `egress`; returns messages per second received. Each side has its own libzmq context (one
/// I/O thread each), as separate processes would.
enum RawEventLoad {
    static let payload = Frame(repeating: UInt8(ascii: "x"), count: 200)

    static func measure(ingress: String, egress: String, seconds: Double) throws -> Double {
        let subscriberReady = StopFlag()
        let done = StopFlag()
        let result = Mutex<(count: UInt64, elapsed: Double)>((0, 0))
        let failure = Mutex<String?>(nil)

        let receiver = OwnedThread(name: "bench-sub") {
            do {
                let context = try Context()
                let socket = try Socket(.sub, context: context)
                try socket.setReceiveHighWaterMark(100_000)
                try socket.setReceiveTimeout(milliseconds: 100)
                try socket.subscribe("bench.")
                try socket.connect(egress)
                let waitUntil = MonotonicClock.milliseconds() + 15_000
                let dataTopic = Frame(frame: "bench.data")
                var started: UInt64 = 0
                var count: UInt64 = 0
                let window = UInt64(seconds * 1_000_000_000)
                while started > 0 || MonotonicClock.milliseconds() < waitUntil {
                    guard let frames = try? socket.receive() else { continue }
                    if started == 0 {
                        subscriberReady.request()
                        if frames[0] == dataTopic { started = MonotonicClock.nanoseconds() }
                        continue
                    }
                    count += 1
                    if count & 1023 == 0, MonotonicClock.nanoseconds() - started >= window { break }
                }
                let elapsed = started == 0 ? 0 : Double(MonotonicClock.nanoseconds() - started) / 1e9
                result.withLock { $0 = (count, elapsed) }
                socket.close()
                context.terminate()
            } catch {
                failure.withLock { $0 = "\(error)" }
            }
            done.request()
        }
        let sender = OwnedThread(name: "bench-pub") {
            do {
                let context = try Context()
                let socket = try Socket(.pub, context: context)
                try socket.setSendHighWaterMark(100_000)
                try socket.setNoDrop(true)
                try socket.setSendTimeout(milliseconds: 100)
                try socket.connect(ingress)
                let probe = Frame(frame: "bench.probe")
                while !subscriberReady.isRequested && !done.isRequested {
                    _ = try? socket.send(message: [probe, payload], dontWait: true)
                    usleep(5_000)
                }
                let topic = Frame(frame: "bench.data")
                while !done.isRequested {
                    for _ in 0..<256 {
                        do {
                            try socket.send(topic, more: true)
                            try socket.send(payload)
                        } catch { break }
                    }
                }
                socket.close()
                context.terminate()
            } catch {
                failure.withLock { $0 = "\(error)" }
                done.request()
            }
        }
        receiver.joinBlocking()
        sender.joinBlocking()
        if let failure = failure.withLock({ $0 }) { throw ConfigurationError("raw event load failed: \(failure)") }
        let (count, elapsed) = result.withLock { $0 }
        guard elapsed > 0 else { throw ConfigurationError("no events arrived through \(ingress) → \(egress) within 15 s") }
        return Double(count) / elapsed
    }
}

/// Typed events through `EventPublisher` → bus → `EventSubscriber` (JSON encode and strict decode
/// included): the platform's most frequent event, `device.location`, with its own codec.
enum CloudEventLoad {
    static func measure(ingress: String, egress: String, seconds: Double) async throws -> Double {
        let logger = CLILogging.logger
        let subscriber = try await EventSubscriber<DeviceLocationEvent>(endpoint: egress, prefixes: ["bench.ce."], logger: logger)
        let publisher = try await EventPublisher(endpoint: ingress, source: "bench", logger: logger)
        let stop = StopFlag()
        let sample = DeviceLocationEvent(
            deviceID: "2744A672-D4A9-36E7-BC89-FDAA704114A8",
            location: DeviceLocation(latitude: 47.835903, longitude: 35.11459362, recordedAt: Date(), accuracy: 5, speed: 12.5))
        let producing = Task.detached {
            while !stop.isRequested {
                for _ in 0..<512 {
                    _ = try? publisher.publish(topic: "bench.ce.location", type: Events.deviceLocation.type, data: sample)
                }
                // Keep the publisher's queue short: this measures flow, not how much can be buffered.
                while publisher.counts.published + 50_000 < publisher.nextSequence, !stop.isRequested {
                    try? await Task.sleep(for: .microseconds(200))
                }
                await Task.yield()
            }
        }
        var count = 0
        var started: ContinuousClock.Instant?
        var elapsed = Duration.zero
        let window = Duration.milliseconds(Int(seconds * 1000))
        let giveUp = ContinuousClock.now + .seconds(15)
        loop: for await batch in subscriber.deliveries {
            for delivery in batch {
                guard case .event = delivery else { continue }
                if started == nil {
                    started = .now
                    continue
                }
                count += 1
            }
            if let started {
                elapsed = ContinuousClock.now - started
                if elapsed >= window { break loop }
            } else if ContinuousClock.now > giveUp {
                break loop
            }
        }
        stop.request()
        _ = await producing.result
        await publisher.close()
        await subscriber.close()
        guard started != nil else { throw ConfigurationError("no CloudEvents arrived within 15 s") }
        return Double(count) / (Double(elapsed.milliseconds) / 1000)
    }
}

/// Requests through the broker to the echo workers.
enum RequestLoad {
    struct Echo: Codable, Sendable { var text: String }

    /// Waits until the bus reports at least (or, with `exactly`, exactly) `count` workers of `service`.
    static func waitForWorkers(healthURL: String, service: String, count: Int, exactly: Bool = false) async throws {
        let deadline = ContinuousClock.now + .seconds(20)
        while ContinuousClock.now < deadline {
            if let response = try? await HTTPProbe.get(healthURL),
                let health = try? JSONCoding.decode(JSONValue.self, from: Array(response.body))
            {
                let workers = Int(health["details"]?["services"]?[service]?["workers"]?.numberValue ?? 0)
                if exactly ? workers == count : workers >= count { return }
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw ConfigurationError("the bus did not report \(count) echo workers within 20 s")
    }

    /// Microseconds per request, one at a time. With `onClientThread`, the loop runs on the
    /// client's executor (replies resume it without a hand-off to the cooperative pool).
    static func latency(broker: String, requests: Int, onClientThread: Bool = false) async throws -> Percentiles {
        let client = try await ServiceClient(broker: broker, logger: CLILogging.logger)
        let params = try JSONCoding.encode(Echo(text: "hello"))
        let measure = { () async throws -> [Double] in
            for _ in 0..<200 { _ = try await client.callRaw("bench-echo", "echo", json: params) }
            var samples: [Double] = []
            samples.reserveCapacity(requests)
            for _ in 0..<requests {
                let start = MonotonicClock.nanoseconds()
                let reply = try await client.callRaw("bench-echo", "echo", json: params)
                samples.append(Double(MonotonicClock.nanoseconds() - start) / 1000)
                guard reply.status == 200 else { throw ConfigurationError("echo failed: \(reply.status)") }
            }
            return samples
        }
        let samples = onClientThread ? try await withTaskExecutorPreference(client.executor, operation: measure) : try await measure()
        await client.close()
        return Percentiles(samples)
    }

    /// Microseconds per request from a plain blocking REQ socket on a thread of its own: the
    /// broker-and-worker part of the latency, without our async client's thread hand-offs.
    static func rawLatency(broker: String, requests: Int) throws -> Percentiles {
        let samples = Mutex<[Double]>([])
        let failure = Mutex<String?>(nil)
        let thread = OwnedThread(name: "bench-req") {
            do {
                let socket = try Socket(.req)
                try socket.connect(broker)
                let request = MDP.clientRequest(
                    service: "bench-echo", body: ServiceRequest(op: "echo", json: Array(#"{"text":"hello"}"#.utf8)).frames
                ).dropFirst()
                var local: [Double] = []
                local.reserveCapacity(requests)
                for index in 0..<(requests + 200) {
                    let start = MonotonicClock.nanoseconds()
                    try socket.send(message: Array(request))
                    _ = try socket.receive()
                    if index >= 200 { local.append(Double(MonotonicClock.nanoseconds() - start) / 1000) }
                }
                socket.close()
                samples.withLock { $0 = local }
            } catch {
                failure.withLock { $0 = "\(error)" }
            }
        }
        thread.joinBlocking()
        if let failure = failure.withLock({ $0 }) { throw ConfigurationError("raw REQ latency failed: \(failure)") }
        return Percentiles(samples.withLock { $0 })
    }

    /// Microseconds per round trip of a plain REQ→REP pair (two libzmq hops, no broker), each side
    /// on its own thread with its own context: the floor a brokered request (four hops) stands on.
    static func directRoundTrip(requests: Int) throws -> Percentiles {
        let port = try FreePort.next()
        let endpoint = "tcp://127.0.0.1:\(port)"
        let stop = StopFlag()
        let failure = Mutex<String?>(nil)
        let server = OwnedThread(name: "bench-rep") {
            do {
                let context = try Context()
                let socket = try Socket(.rep, context: context)
                try socket.setReceiveTimeout(milliseconds: 100)
                try socket.bind(endpoint)
                while !stop.isRequested {
                    guard let message = try? socket.receive() else { continue }
                    try socket.send(message: message)
                }
                socket.close()
                context.terminate()
            } catch {
                failure.withLock { $0 = "REP side: \(error)" }
            }
        }
        let samples = Mutex<[Double]>([])
        let client = OwnedThread(name: "bench-req") {
            do {
                let context = try Context()
                let socket = try Socket(.req, context: context)
                try socket.setReceiveTimeout(milliseconds: 2000)
                try socket.connect(endpoint)
                let message = [Frame(repeating: 120, count: 40)]
                var local: [Double] = []
                for index in 0..<(requests + 200) {
                    let start = MonotonicClock.nanoseconds()
                    try socket.send(message: message)
                    _ = try socket.receive()
                    if index >= 200 { local.append(Double(MonotonicClock.nanoseconds() - start) / 1000) }
                }
                socket.close()
                context.terminate()
                samples.withLock { $0 = local }
            } catch {
                failure.withLock { $0 = $0 ?? "REQ side: \(error)" }
            }
        }
        client.joinBlocking()
        stop.request()
        server.joinBlocking()
        if let failure = failure.withLock({ $0 }) { throw ConfigurationError("direct REQ→REP round trips failed: \(failure)") }
        return Percentiles(samples.withLock { $0 })
    }

    /// Requests per second with `inflight` outstanding at all times.
    static func throughput(broker: String, requests: Int, inflight: Int) async throws -> Double {
        var options = MDPClient.Options()
        options.maxLanes = inflight
        options.timeout = .seconds(10)
        let client = try await ServiceClient(broker: broker, options: options, logger: CLILogging.logger)
        let params = try JSONCoding.encode(Echo(text: "hello"))
        let start = MonotonicClock.nanoseconds()
        try await withThrowingTaskGroup(of: Void.self) { group in
            var started = 0
            func launch() {
                started += 1
                group.addTask {
                    let reply = try await client.callRaw("bench-echo", "echo", json: params)
                    if reply.status != 200 { throw ConfigurationError("echo failed: \(reply.status)") }
                }
            }
            for _ in 0..<min(inflight, requests) { launch() }
            while try await group.next() != nil {
                if started < requests { launch() }
            }
        }
        let seconds = Double(MonotonicClock.nanoseconds() - start) / 1e9
        await client.close()
        return Double(requests) / seconds
    }
}
