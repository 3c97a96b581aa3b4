import Foundation
import Logging
import Testing
import Wire
import ZeroMQ

@testable import Bus

/// The client under the conditions a review found hard: late workers, cancellation, closing with
/// requests in flight, the broker's own error replies on the multiplexed socket.
@Suite(.timeLimit(.minutes(1))) struct ClientRobustnessTests {
    func echoWorker(_ endpoint: String, service: String = "echo") -> (MDPWorker, Task<Void, any Error>) {
        var router = OpRouter(service: service)
        router.on("echo") { (params: EchoParams, _) in params.text }
        let worker = MDPWorker(endpoint: endpoint, service: service, options: .init(), logger: quietLogger)
        let serving = Task { [router] in try await worker.run { await router.handle($0, logger: quietLogger) } }
        return (worker, serving)
    }

    /// A broker that keeps a request for a missing service far longer than any test waits: under
    /// the suite's load, its usual 10-s `503 no_worker` once answered a request before the test's
    /// cancellation reached it.
    var patientBroker: BrokerConfiguration {
        var configuration = BrokerConfiguration()
        configuration.requestTimeToLive = 600_000
        return configuration
    }

    @Test func aProbeRetriedBecauseItsWorkerCameLateStillAnswersAndReleasesTheOthers() async throws {
        let broker = Broker(logger: quietLogger)
        let endpoint = try await broker.start(endpoint: "tcp://127.0.0.1:*")
        var options = MDPClient.Options()
        options.timeout = .milliseconds(300)
        options.attempts = 40  // 12 s: the worker may take seconds to register while the whole suite starts at once
        let client = try await ServiceClient(broker: endpoint, options: options, logger: quietLogger)
        // Three requests before any worker exists: one probes, two wait for it; the probe times out
        // and is retried (still the probe) until the worker arrives.
        let calls = (0..<3).map { i in Task { try await client.call("echo", "echo", EchoParams(text: "\(i)"), as: String.self) } }
        try await Task.sleep(for: .milliseconds(700))
        let (worker, serving) = echoWorker(endpoint)
        for (i, call) in calls.enumerated() { #expect(try await call.value == "\(i)") }
        await client.close()
        worker.stop()
        try await serving.value
        broker.stop()
        await broker.join()
    }

    @Test func closingFailsEveryRequestInFlightAndRefusesNewOnes() async throws {
        let broker = Broker(configuration: patientBroker, logger: quietLogger)
        let endpoint = try await broker.start(endpoint: "tcp://127.0.0.1:*")
        let (worker, serving) = echoWorker(endpoint)
        var options = MDPClient.Options()
        // Far longer than the bound below: what is measured is closing, not a timeout, under any
        // load (CI once took 2.02 s beside the whole-platform tests with a 5-s timeout and a 2-s bound).
        options.timeout = .seconds(300)
        let client = try await ServiceClient(broker: endpoint, options: options, logger: quietLogger)
        _ = try await client.call("echo", "echo", EchoParams(text: "learn"), as: String.self)
        // Requests to a service nobody serves: they wait, multiplexed or probing, until closed.
        let calls = (0..<200).map { i in
            Task { try await client.callRaw(i % 2 == 0 ? "echo-nobody" : "nobody", "x", json: Array("{}".utf8)) }
        }
        try await Task.sleep(for: .milliseconds(50))
        let closing = ContinuousClock.now
        await client.close()
        for call in calls {
            await #expect(throws: MDPClientError.closed) { try await call.value }
        }
        #expect(
            ContinuousClock.now - closing < .seconds(120),
            "closing does not wait for the requests' 300-s timeouts (room for make test's first minute)")
        await #expect(throws: MDPClientError.closed) { try await client.callRaw("echo", "echo", json: Array("{}".utf8)) }
        worker.stop()
        try await serving.value
        broker.stop()
        await broker.join()
    }

    @Test func cancellingARequestEndsItPromptlyWhetherItIsWaitingOrAlreadyCancelled() async throws {
        let broker = Broker(configuration: patientBroker, logger: quietLogger)
        let endpoint = try await broker.start(endpoint: "tcp://127.0.0.1:*")
        var options = MDPClient.Options()
        // Far longer than the bound below: ended by the cancellation, not by the timeout, whatever the load.
        options.timeout = .seconds(300)
        let client = try await MDPClient(endpoint: endpoint, options: options, logger: quietLogger)
        let waiting = Task { try await client.request(service: "nobody", body: [Frame(frame: "x")]) }
        try await Task.sleep(for: .milliseconds(50))
        let start = ContinuousClock.now
        waiting.cancel()
        await #expect(throws: MDPClientError.cancelled) { try await waiting.value }
        #expect(
            ContinuousClock.now - start < .seconds(120),
            "a cancelled request ends at once, not at its 300-s timeout (room for a loaded machine)")
        let alreadyCancelled = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await client.request(service: "nobody", body: [Frame(frame: "x")])
        }
        await #expect(throws: MDPClientError.cancelled) { try await alreadyCancelled.value }
        // Cancelling after the answer changes nothing (and leaves nothing behind).
        await client.close()
        broker.stop()
        await broker.join()
    }

    @Test func requestIDsAreNeverTakenForAReplyBody() {
        #expect(RequestID.split([RequestID.line(42) + Array("200\n{}".utf8)])?.id == 42)
        #expect(RequestID.split([Frame(frame: "42\n{}")]) == nil, "a status and a body, not an id")
        #expect(RequestID.split([Frame(frame: "200\nr42\n")]) == nil, "a line inside the body is the body's")
        #expect(RequestID.parse(Frame(frame: "r")[...]) == nil)
        #expect(RequestID.parse(Frame(frame: "r4x")[...]) == nil)
    }

    @Test func thePublisherClosesInTimeEvenWhenTheBusStopsReading() async throws {
        // A raw XSUB that subscribes to everything and then never reads: the publisher's sends stall.
        let stop = StopFlag()
        let (stalled, endpoint) = try await OwnedThread.start(name: "stalled-bus") {
            (ready: @escaping @Sendable (Result<String, any Error>) -> Void) in
            do {
                let xsub = try Socket(.xsub)
                try xsub.setReceiveHighWaterMark(10)
                try xsub.bind("tcp://127.0.0.1:*")
                try xsub.send([1])
                ready(.success(try xsub.lastEndpoint))
                // Asking for events makes libzmq process its commands (attaching the publisher's
                // connection, which re-sends the subscription) without reading any message.
                while !stop.isRequested {
                    _ = try? xsub.canReceive
                    usleep(10_000)
                }
                xsub.close()
            } catch {
                ready(.failure(error))
            }
        }
        var options = EventPublisher.Options()
        options.sendHighWaterMark = 10
        options.flushTimeout = .milliseconds(300)
        let publisher = try await EventPublisher(endpoint: endpoint, source: "stall", options: options, logger: quietLogger)
        #expect(await publisher.waitForSubscriber(to: "x.y"))
        let payload = String(repeating: "p", count: 1000)
        for _ in 0..<50_000 { try publisher.publish(topic: "x.y", type: "t", data: ["p": .string(payload)] as JSONValue) }
        let start = ContinuousClock.now
        await publisher.close()
        #expect(
            ContinuousClock.now - start < .seconds(120),
            "close gave up at the flush deadline (300 ms), not never (room for a loaded machine)")
        #expect(publisher.counts.dropped > 0, "what could not be sent is counted")
        stop.request()
        await stalled.join()
    }

}
