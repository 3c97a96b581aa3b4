import Foundation
import Logging
import Testing
import Wire
import ZeroMQ

@testable import Bus

let quietLogger: Logger = {
    var logger = Logger(label: "test")
    logger.logLevel = .critical
    return logger
}()

struct EchoParams: Codable, Sendable {
    var text: String
    var times: Int?
}

/// A broker and a worker on a wildcard port, in this process, over real TCP sockets.
func withBrokerAndWorker(
    concurrency: Int = 4, _ body: @Sendable (_ client: ServiceClient, _ endpoint: String) async throws -> Void
) async throws {
    let broker = Broker(logger: quietLogger)
    let endpoint = try await broker.start(endpoint: "tcp://127.0.0.1:*")
    var router = OpRouter(service: "echo")
    router.on("echo") { (params: EchoParams, _) in
        String(repeating: params.text, count: params.times ?? 1)
    }
    router.on("fail") { (_: OpContext) -> String in
        throw ServiceError.conflict("already_done", "it was already done")
    }
    router.on("crash") { (_: OpContext) -> String in
        struct Boom: Error {}
        throw Boom()
    }
    var options = MDPWorker.Options()
    options.concurrency = concurrency
    let worker = MDPWorker(endpoint: endpoint, service: "echo", options: options, logger: quietLogger)
    let serving = Task { [router] in try await worker.run { await router.handle($0, logger: quietLogger) } }
    var clientOptions = MDPClient.Options()
    clientOptions.timeout = .seconds(2)
    clientOptions.attempts = 1
    let client = try await ServiceClient(broker: endpoint, options: clientOptions, logger: quietLogger)
    // Registered before the first request: on a busy machine the worker's connection can take
    // longer than a request's 2 s.
    let registered = ContinuousClock.now + .seconds(20)
    while !worker.isRegistered, ContinuousClock.now < registered { try await Task.sleep(for: .milliseconds(10)) }
    do {
        try await body(client, endpoint)
    } catch {
        worker.stop()
        broker.stop()
        throw error
    }
    await client.close()
    worker.stop()
    try await serving.value
    broker.stop()
    await broker.join()
}

@Suite(.timeLimit(.minutes(1))) struct SocketLoopTests {
    @Test func aRequestGoesThroughTheBrokerToAWorkerAndBack() async throws {
        try await withBrokerAndWorker { client, _ in
            let text = try await client.call("echo", "echo", EchoParams(text: "ab", times: 3), as: String.self)
            #expect(text == "ababab")
            let ping = try await client.call("echo", "ping", NoParams(), as: PingReply.self)
            #expect(ping.service == "echo")
            #expect(ping.ops == ["crash", "echo", "fail", "ping"])
            #expect(try await client.hasWorkers("echo"))
            #expect(try await !client.hasWorkers("nobody"))
        }
    }

    @Test func badRequestsGetClearErrors() async throws {
        try await withBrokerAndWorker { client, _ in
            let unknown = try await client.callRaw("echo", "nope", json: Array("{}".utf8))
            #expect(unknown.status == 404)
            #expect(unknown.serviceError?.code == "unknown_op")
            let notJSON = try await client.callRaw("echo", "echo", json: Array("{oops".utf8))
            #expect(notJSON.status == 400)
            #expect(notJSON.serviceError?.code == "invalid_json")
            let wrongShape = try await client.callRaw("echo", "echo", json: Array(#"{"text":5}"#.utf8))
            #expect(wrongShape.status == 422)
            #expect(wrongShape.serviceError?.message == "text: expected a string, found number")
            let missing = try await client.callRaw("echo", "echo", json: Array(#"{}"#.utf8))
            #expect(missing.serviceError?.message == "text: required field is missing")
            let refused = try await client.callRaw("echo", "fail", json: Array("{}".utf8))
            #expect(refused.status == 409)
            #expect(refused.serviceError?.code == "already_done")
            let crashed = try await client.callRaw("echo", "crash", json: Array("{}".utf8))
            #expect(crashed.status == 500)
            #expect(crashed.serviceError?.code == "internal")
            let fourFrames = try await client.mdp.request(service: "echo", body: [Frame(frame: "echo"), [], [], []])
            #expect(try ServiceReply(frames: fourFrames).status == 400)
            // A correlation line is written back ahead of the reply.
            let withID = try await client.mdp.request(service: "echo", body: [Frame(frame: #"r77\#necho\#n{"text":"x"}"#)])
            #expect(withID == [Frame(frame: #"r77\#n200\#n"x""#)])
            // And the worker still serves.
            #expect(try await client.call("echo", "echo", EchoParams(text: "ok"), as: String.self) == "ok")
        }
    }

    @Test func aServiceThatEchoesRequestIDsIsMultiplexedOnOneSocket() async throws {
        try await withBrokerAndWorker(concurrency: 8) { client, _ in
            // The first request probes; after it, every request shares one connection. Replies that
            // arrive in any order still reach their own caller.
            _ = try await client.call("echo", "echo", EchoParams(text: "probe"), as: String.self)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for i in 0..<500 {
                    group.addTask {
                        let text = try await client.call("echo", "echo", EchoParams(text: "\(i)."), as: String.self)
                        #expect(text == "\(i).")
                    }
                }
                try await group.waitForAll()
            }
        }
    }

    @Test func aCallerOnTheClientsExecutorResumesOnTheClientsThread() async throws {
        try await withBrokerAndWorker { client, _ in
            let threads = try await withTaskExecutorPreference(client.executor) { () async throws -> Set<UInt> in
                var seen = Set<UInt>()
                for i in 0..<20 {
                    _ = try await client.call("echo", "echo", EchoParams(text: "\(i)"), as: String.self)
                    seen.insert(UInt(pthread_self()))
                }
                return seen
            }
            #expect(threads.count == 1, "every resumption on the one client thread")
        }
    }

    @Test func concurrentRequestsAllGetTheirOwnReply() async throws {
        try await withBrokerAndWorker(concurrency: 8) { client, _ in
            try await withThrowingTaskGroup(of: Void.self) { group in
                for i in 0..<200 {
                    group.addTask {
                        let text = try await client.call("echo", "echo", EchoParams(text: "\(i)-"), as: String.self)
                        #expect(text == "\(i)-")
                    }
                }
                try await group.waitForAll()
            }
        }
    }

    @Test func aRequestWithNoWorkerTimesOut() async throws {
        let broker = Broker(logger: quietLogger)
        let endpoint = try await broker.start(endpoint: "tcp://127.0.0.1:*")
        var options = MDPClient.Options()
        options.timeout = .milliseconds(200)
        options.attempts = 2
        let client = try await MDPClient(endpoint: endpoint, options: options, logger: quietLogger)
        await #expect(throws: MDPClientError.timeout(service: "nobody", attempts: 2, milliseconds: 200)) {
            try await client.request(service: "nobody", body: [Frame(frame: "x")])
        }
        await client.close()
        broker.stop()
        await broker.join()
    }

    @Test func aMalformedEndpointFailsAtStart() async throws {
        await #expect(throws: ZMQError.self) { try await MDPClient(endpoint: "tcp//nowhere", logger: quietLogger) }
        let broker = Broker(logger: quietLogger)
        await #expect(throws: ZMQError.self) { try await broker.start(endpoint: "bogus://x") }
    }

    @Test func eventsFlowThroughTheForwarderByPrefixWithSequences() async throws {
        let forwarder = EventForwarder(logger: quietLogger)
        let (ingress, egress) = try await forwarder.start(ingress: "tcp://127.0.0.1:*", egress: "tcp://127.0.0.1:*", highWaterMark: 100_000)
        let subscriber = try await EventSubscriber<JSONValue>(endpoint: egress, prefixes: ["order."], logger: quietLogger)
        let publisher = try await EventPublisher(endpoint: ingress, source: "orders", logger: quietLogger)
        // A raw PUB socket sends garbage from its own thread (sockets stay on the thread that made them).
        let garbage = RepeatingSender(endpoint: ingress, message: [Frame(frame: "order.garbage"), Frame(frame: "not json")])

        // Slow joiners: publish a probe until the subscription has reached the publisher.
        var iterator = subscriber.deliveries.makeAsyncIterator()
        let probing = Task {
            while !Task.isCancelled {
                try publisher.publish(topic: "order.probe", type: "probe", data: ["n": 0] as JSONValue)
                try await Task.sleep(for: .milliseconds(20))
            }
        }
        var sawMalformed = false
        var sawProbe = false
        while !(sawMalformed && sawProbe), let batch = await iterator.next() {
            for delivery in batch {
                switch delivery {
                case .malformed(let problem):
                    #expect(problem.topic == "order.garbage")
                    #expect(problem.reason.hasPrefix("invalid event"))
                    sawMalformed = true
                case .event: sawProbe = true
                }
            }
        }
        probing.cancel()
        _ = await probing.result
        let start = publisher.nextSequence
        for i in 0..<1000 {
            try publisher.publish(
                topic: i % 2 == 0 ? "order.status.NEW" : "trip.created", type: "t", data: ["i": .number(Double(i))] as JSONValue)
        }
        try publisher.publish(topic: "order.done", type: "done", data: JSONValue.null)
        var received: [ReceivedEvent<JSONValue>] = []
        outer: while let batch = await iterator.next() {
            for case .event(let event) in batch where event.event.sequence >= start {
                received.append(event)
                if event.topic == "order.done" { break outer }
            }
        }
        #expect(received.count == 501)
        #expect(received.allSatisfy { $0.topic.hasPrefix("order.") })
        #expect(
            received.filter { if case .gap = $0.sequence { true } else { false } }.count == received.count - 1,
            "trip.* events are filtered out, so every order event after the first shows the skipped sequence as a gap")
        #expect(forwarder.stats.forwarded >= 501)
        await garbage.stop()
        await publisher.close()
        await subscriber.close()
        forwarder.stop()
        await forwarder.join()
    }
}

/// Sends one message every 20 ms from a thread of its own until stopped.
final class RepeatingSender: Sendable {
    private let stopRequested = StopFlag()
    private let thread: OwnedThread

    init(endpoint: String, message: [Frame], type: SocketType = .pub) {
        let stopRequested = self.stopRequested
        thread = OwnedThread(name: "repeating-sender") {
            guard let socket = try? Socket(type), (try? socket.connect(endpoint)) != nil else { return }
            while !stopRequested.isRequested {
                _ = try? socket.send(message: message, dontWait: true)
                usleep(20_000)
            }
            socket.close()
        }
    }

    func stop() async {
        stopRequested.request()
        await thread.join()
    }
}
