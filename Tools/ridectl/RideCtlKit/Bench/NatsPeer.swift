import Foundation
import SettingsKit
import Synchronization
import ZeroMQ

/// NATS (Debian's `nats-server`) as the peer `bench bus` stands beside: the same 200-byte events
/// from a publisher to a subscriber, and the same echo requests, one in flight and many, through
/// nats-server where they go through ride-bus. Each side of a load is a thread with a connection of
/// its own, as ride-bus's loads are. Nil where it is not installed.
struct NatsPeer: BenchPeer {
    let server: PeerServer

    static let missing = "nats-server is not installed (apt-get install nats-server)"

    static func start(logs: String) async throws -> NatsPeer? {
        guard let executable = PeerServer.installed(["/usr/sbin/nats-server", "/usr/bin/nats-server", "/usr/local/bin/nats-server"])
        else { return nil }
        let server = try await PeerServer.start(
            name: "nats-server", executable: executable, logs: logs, arguments: { ["-a", "127.0.0.1", "-p", "\($0)"] },
            version: { try NatsConnection(port: $0).serverVersion })
        return NatsPeer(server: server)
    }

    var version: String { server.version }

    /// `bench bus`'s rows for the peer: its raw events (unless `rawEvents` is nil: not measured for
    /// ride-bus either) and its requests (unless `pipelined` is nil), each beside ride-bus's figure.
    static func compare(
        in table: inout BenchTable, logs: String, rounds: Int, seconds: Double, rawEvents: Double?,
        requests mdp: (p50: Double, pipelined: Double)?, latencyRequests: Int, pipelined: (count: Int, inflight: Int)?
    ) async throws {
        let ran = try await run(logs: logs) { nats in
            if let rawEvents {
                var best = 0.0
                for round in 1...rounds {
                    Output.err("round \(round)/\(rounds): NATS \(nats.version), raw events…\n")
                    best = max(best, try nats.events(seconds: seconds))
                }
                table.add("raw events, NATS \(nats.version) (the peer)", BenchTable.rate(best, "msg/s"), "the peer, this run")
                table.add("raw events, ride-bus ÷ NATS", String(format: "%.2f×", rawEvents / best), "reported")
            }
            if let pipelined {
                Output.err("NATS \(nats.version): request/reply, \(latencyRequests) sequential, then \(pipelined.count) pipelined…\n")
                let (latency, perSecond, lost) = try nats.requests(
                    sequential: latencyRequests, pipelined: pipelined.count, inflight: pipelined.inflight)
                table.add(
                    "NATS \(nats.version) request/reply over tcp, one client, p50 / p99",
                    "\(BenchTable.micros(latency.value(50))) / \(BenchTable.micros(latency.value(99)))", "the peer, this run")
                table.add(
                    "NATS request/reply pipelined over tcp, 2 responders" + (lost > 0 ? " (\(lost) never answered)" : ""),
                    BenchTable.rate(perSecond, "req/s"), "the peer, this run")
                if let mdp {
                    table.add(
                        "MDP over tcp ÷ NATS: p50 (lower is better) / pipelined",
                        String(format: "%.2f× / %.2f×", mdp.p50 / latency.value(50), mdp.pipelined / perSecond), "reported")
                }
            }
        }
        if !ran { table.add("NATS, the peer", missing, "reported") }
    }

    /// Events a second the subscriber receives. The publisher stays at most 50 000 events ahead of
    /// it (NATS would otherwise cut a subscriber that falls behind as a slow consumer): this
    /// measures flow, as ride-bus's raw load does at its high-water mark.
    func events(seconds: Double) throws -> Double {
        let port = server.port
        let subscribed = StopFlag()
        let received = Atomic<UInt64>(0)
        let done = StopFlag()
        let failure = Mutex<String?>(nil)
        let result = Mutex<Double>(0)
        let receiving = OwnedThread(name: "bench-nats-sub") {
            do {
                let subscriber = try NatsConnection(port: port)
                subscriber.subscribe("bench.data", sid: 1)
                try subscriber.ping()
                subscribed.request()
                var started: UInt64 = 0
                var count: UInt64 = 0
                let window = UInt64(seconds * 1_000_000_000)
                let giveUp = MonotonicClock.nanoseconds() + 15_000_000_000
                while !done.isRequested, started > 0 || MonotonicClock.nanoseconds() < giveUp {
                    count += UInt64(try subscriber.receive(waitingUpTo: 100) { _, _ in })
                    received.store(count, ordering: .relaxed)
                    if started == 0, count > 0 { (started, count) = (MonotonicClock.nanoseconds(), 0) }
                    if started > 0, MonotonicClock.nanoseconds() - started >= window {
                        result.withLock { $0 = Double(count) / (Double(MonotonicClock.nanoseconds() - started) / 1e9) }
                        break
                    }
                }
            } catch {
                failure.withLock { $0 = "subscriber: \(error)" }
            }
            done.request()
        }
        let sending = OwnedThread(name: "bench-nats-pub") {
            do {
                let publisher = try NatsConnection(port: port)
                while !subscribed.isRequested && !done.isRequested { usleep(1000) }
                var sent: UInt64 = 0
                while !done.isRequested {
                    guard sent < received.load(ordering: .relaxed) + 50_000 else {
                        usleep(200)
                        continue
                    }
                    for _ in 0..<256 { publisher.publish("bench.data", payload: RawEventLoad.payload) }
                    try publisher.flush()
                    sent += 256
                }
            } catch {
                failure.withLock { $0 = $0 ?? "publisher: \(error)" }
                done.request()
            }
        }
        receiving.joinBlocking()
        sending.joinBlocking()
        if let failure = failure.withLock({ $0 }) { throw ConfigurationError("NATS event load failed: \(failure)") }
        let rate = result.withLock { $0 }
        guard rate > 0 else { throw ConfigurationError("no events arrived through nats-server within 15 s") }
        return rate
    }

    /// Echo requests through nats-server to `responders` threads (one queue group): the latency of
    /// `sequential` requests one after another, then how many a second with `inflight` at once.
    /// Requests the server never answered (at most 1 %) are counted, not waited for.
    func requests(sequential: Int, pipelined count: Int, inflight: Int, responders: Int = 2) throws -> (
        latency: Percentiles, perSecond: Double, lost: Int
    ) {
        let port = server.port
        let stop = StopFlag()
        let ready = Atomic<Int>(0)
        let failure = Mutex<String?>(nil)
        var echoes: [OwnedThread] = []
        for index in 0..<responders {
            let echo = OwnedThread(name: "bench-nats-echo-\(index)") {
                do {
                    let connection = try NatsConnection(port: port)
                    connection.subscribe("bench.echo", queue: "echo", sid: 1)
                    try connection.ping()
                    ready.add(1, ordering: .relaxed)
                    while !stop.isRequested {
                        _ = try connection.receive(waitingUpTo: 100) { replyTo, payload in
                            if let replyTo { connection.publish(replyTo, payload: Array(payload)) }
                        }
                        if connection.queuedBytes > 0 { try connection.flush() }
                    }
                } catch {
                    failure.withLock { $0 = $0 ?? "responder: \(error)" }
                    ready.add(1, ordering: .relaxed)
                }
            }
            echoes.append(echo)
        }
        defer {
            stop.request()
            for echo in echoes { echo.joinBlocking() }
        }
        while ready.load(ordering: .relaxed) < responders { usleep(1000) }
        if let failure = failure.withLock({ $0 }) { throw ConfigurationError("NATS request load failed: \(failure)") }
        let client = try NatsConnection(port: port)
        client.subscribe("_INBOX.bench.*", sid: 2)
        try client.ping()
        let request = Array(#"echo\#n{"text":"hello"}"#.utf8)
        var samples: [Double] = []
        samples.reserveCapacity(sequential)
        for index in 0..<(sequential + 200) {
            let start = MonotonicClock.nanoseconds()
            client.publish("bench.echo", replyTo: "_INBOX.bench.1", payload: request)
            try client.flush()
            var answered = 0
            while answered == 0 { answered = try client.receive(waitingUpTo: 5000) { _, _ in } }
            if index >= 200 { samples.append(Double(MonotonicClock.nanoseconds() - start) / 1000) }
        }
        let started = MonotonicClock.nanoseconds()
        var (sent, answered, lost) = (0, 0, 0)
        while answered + lost < count {
            while sent < count, sent - answered - lost < inflight {
                client.publish("bench.echo", replyTo: "_INBOX.bench.\(sent)", payload: request)
                sent += 1
            }
            if client.queuedBytes > 0 { try client.flush() }
            let arrived = try client.receive(waitingUpTo: 1000) { _, _ in }
            if arrived == 0 {
                // Core NATS delivers at most once (a responder the server finds slow is cut off, and
                // what it held is gone): a second of silence loses what is outstanding, as a client's timeout would.
                lost += sent - answered - lost
                guard lost * 100 <= count else { throw ConfigurationError("NATS: \(lost) of \(count) requests never answered") }
            }
            answered += arrived
        }
        let perSecond = Double(answered) / (Double(MonotonicClock.nanoseconds() - started) / 1e9)
        if let failure = failure.withLock({ $0 }) { throw ConfigurationError("NATS request load failed: \(failure)") }
        return (Percentiles(samples), perSecond, lost)
    }
}
