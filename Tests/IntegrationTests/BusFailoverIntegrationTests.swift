import Bus
import Foundation
import Testing
import Wire

/// A bus of two instances (docs/operations.md, "Two buses"), each a real `ride-bus` on its own
/// loopback address: workers registered with both brokers, clients and subscribers of both, and one
/// instance killed on the way. The same across real hosts, with the platform's rides, is
/// `HostsIntegrationTests.theActiveBusHostKilledTenTimesLosesNoRide`.
@Suite(.timeLimit(.minutes(3)))
struct BusFailoverIntegrationTests {
    struct Echo: Codable, Sendable, Equatable { var text: String }
    struct Numbered: Codable, Sendable { var n: Int }

    static let second = TestHost(name: "loopback 127.0.0.2", address: "127.0.0.2", namespace: nil)

    static func withTwoBuses(_ name: String, _ body: (TestBus) async throws -> Void) async throws {
        try await withTestBus(name, placement: ["bus-2": second], instances: ["bus", "bus-2"], body)
    }

    @Test func requestsGoThroughTheOtherBrokerWhenTheActiveOneIsKilled() async throws {
        try await Self.withTwoBuses("failover-requests") { bus in
            try bus.startEchoWorker("echo")
            for instance in bus.instances {
                let health = "http://\(bus.host(of: instance).address):\(bus.httpPort)/health"
                try await eventually("echo registered with \(instance)", timeout: .seconds(30)) {
                    (try? await workerCount("echo", busHealthURL: health)) ?? 0 > 0
                }
            }
            let client = try await bus.client(timeout: .seconds(5), attempts: 3)
            let failover = try #require(client.failover, "a bus address of two endpoints makes a failover client")
            #expect(try await client.call("echo", "echo", Echo(text: "before"), as: Echo.self) == Echo(text: "before"))
            let active = failover.activeEndpoint
            let killed = try #require(bus.instances.first { active.contains(bus.host(of: $0).address) })
            bus.supervisor.signal(killed, SIGKILL)
            let killedAt = ContinuousClock.now
            // The first request after the kill is answered through the other broker (sent again
            // there if it went to the dead one first); the next ones go there directly. None fails.
            #expect(try await client.call("echo", "echo", Echo(text: "after 0"), as: Echo.self) == Echo(text: "after 0"))
            let failoverTime = ContinuousClock.now - killedAt
            for n in 1...20 {
                #expect(try await client.call("echo", "echo", Echo(text: "after \(n)"), as: Echo.self) == Echo(text: "after \(n)"))
            }
            print(
                "bus failover (loopback): \(killed) killed; the first request answered through \(failover.activeEndpoint) \(failoverTime) after"
            )
            #expect(failover.activeEndpoint != active)
            #expect(failover.failovers == 1, "one move, counted (ride_broker_failovers_total)")
            #expect(failover.brokers.map(\.answering) == bus.instances.map { $0 != killed }, "\(failover.brokers)")
            #expect(failoverTime < .seconds(10), "the probe finds a dead broker within a second; a request's own timeout is 5 s")
            await client.close()
        }
    }

    @Test func eventsReachSubscribersOnceThroughEitherInstanceAndGoOnWhenOneIsKilled() async throws {
        try await Self.withTwoBuses("failover-events") { bus in
            let subscriber = try await EventSubscriber<Numbered>(endpoint: bus.egress, prefixes: ["pair."], logger: testLogger)
            // Hears the second instance alone: proof that the publisher reaches it before the first one dies.
            let witness = try await EventSubscriber<Numbered>(
                endpoint: "tcp://\(Self.second.address):\(bus.subPort)", prefixes: ["pair."], logger: testLogger)
            let publisher = try await EventPublisher(endpoint: bus.ingress, source: "pair", logger: testLogger)
            #expect(await publisher.waitForSubscriber(to: "pair.n"))
            // Both instances subscribed before anything counts: the publisher hears of a subscription
            // through either, and an event published before the other's arrives goes one way only.
            let warmingUp = Task {
                while !Task.isCancelled {
                    _ = try? publisher.publish(topic: "pair.warmup", type: "n", data: Numbered(n: 0))
                    try? await Task.sleep(for: .milliseconds(20))
                }
            }
            _ = try await firstEvent(witness, timeout: .seconds(30)) { _ in true }
            _ = try await firstEvent(subscriber, timeout: .seconds(30)) { _ in true }
            warmingUp.cancel()
            await warmingUp.value
            var received: [ReceivedEvent<Numbered>] = []
            var iterator = subscriber.deliveries.makeAsyncIterator()
            var n = 0
            func publishAndReceive(_ count: Int) async throws {
                for _ in 0..<count {
                    n += 1
                    try publisher.publish(topic: "pair.n", type: "n", data: Numbered(n: n))
                }
                let wanted = received.count + count
                let deadline = ContinuousClock.now + .seconds(30)
                while received.count < wanted, ContinuousClock.now < deadline, let batch = await iterator.next() {
                    for case .event(let event) in batch where event.topic == "pair.n" { received.append(event) }
                }
            }
            try await publishAndReceive(100)
            _ = try await collect(witness, count: 100, topic: "pair.n")
            bus.supervisor.signal("bus", SIGKILL)
            try await publishAndReceive(100)
            #expect(received.map(\.event.data.n) == Array(1...200), "each event once, in order, through either instance")
            #expect(received.dropFirst().allSatisfy { $0.sequence == .next }, "no gap and no duplicate handed on")
            await publisher.close()
            await subscriber.close()
            await witness.close()
        }
    }
}
