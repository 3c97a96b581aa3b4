import Foundation
import PlatformLauncher
import Testing
import Wire
import ZeroMQ

extension HostsIntegrationTests {
    /// A bus of two instances on hosts of their own (`bus`, `bus-2`; docs/operations.md, "Two
    /// buses"). Ten times during the rides, the host of the broker this test's client goes through
    /// is cut off and its bus killed. The failover time is how long until requests flow again: a
    /// request sent at that moment (`users.ping`) is answered through the other broker. A request
    /// to orders sent with it waits, in addition, for orders' own queue, which during the rides'
    /// booking burst is seconds long with no failover at all: the same request, timed just before
    /// the kill, says how long. The host is then healed, its bus started again, and every worker
    /// registered with it again before the next kill, which therefore alternates between the two.
    @Test func theActiveBusHostKilledTenTimesLosesNoRide() async throws {
        try await ridesSurvive(
            "the active bus's host cut off and its bus killed, ten times", seconds: 150, layout: Layout(buses: ["bus", "bus-2"])
        ) { run in
            let (hosts, bus) = (run.hosts, run.platform.bus)
            let client = try await bus.client(timeout: .seconds(5), attempts: 3)
            guard let failover = client.failover else { throw TestFailure("no failover client for the bus address \(bus.broker)") }
            func healthURL(_ instance: String) -> String { "http://\(bus.host(of: instance).address):\(bus.httpPort)/health" }
            let ordersEvents = Array(#"{"after":0,"limit":1}"#.utf8)
            var kills: [FailoverSample] = []
            for _ in 1...10 {
                let active = failover.activeEndpoint
                guard let killed = bus.instances.first(where: { active.hasPrefix("tcp://\(bus.host(of: $0).address):") }) else {
                    throw TestFailure("the client goes through \(active), which is none of \(bus.broker)")
                }
                let other = try #require(bus.instances.first { $0 != killed })
                let workers = try await registeredWorkers(busHealthURL: healthURL(other))
                let before = ContinuousClock.now
                _ = try await client.callRaw("orders", "events", json: ordersEvents)
                let ordersBefore = ContinuousClock.now - before
                try await hosts.cut(hosts[killed])
                bus.supervisor.signal(killed, SIGKILL)
                let killedAt = ContinuousClock.now
                // When the client moved to the other broker, apart from when requests were answered there.
                let moved = Task {
                    while failover.activeEndpoint == active, !Task.isCancelled { try? await Task.sleep(for: .milliseconds(5)) }
                    return ContinuousClock.now - killedAt
                }
                async let flowing = { () async throws -> Duration in
                    let reply = try await client.callRaw("users", "ping", json: Array("{}".utf8))
                    #expect(reply.status == 200, "users answers through \(other): \(reply.status)")
                    return ContinuousClock.now - killedAt
                }()
                let reply = try await client.callRaw("orders", "events", json: ordersEvents)
                let ordersAnswered = ContinuousClock.now - killedAt
                #expect(reply.status == 200, "orders answers through \(other): \(reply.status)")
                let flowed = try await flowing
                moved.cancel()
                kills.append(FailoverSample(moved: await moved.value, flowing: flowed, orders: ordersAnswered, ordersBefore: ordersBefore))
                try await hosts.heal(hosts[killed])
                try await bus.startProcess(killed)
                let restarted = healthURL(killed)
                // Every worker back, as many as on the other broker: the next kill finds a whole pair, not one
                // broker that a service reaches through a few of its connections while the rest still reconnect.
                try await eventually("every worker registered with \(killed) again", timeout: .seconds(60)) {
                    guard let back = try? await registeredWorkers(busHealthURL: restarted) else { return false }
                    return workers.allSatisfy { back[$0.key, default: 0] >= $0.value }
                }
            }
            await client.close()
            print(FailoverSample.report(kills))
            #expect(
                kills.allSatisfy { $0.moved < .seconds(2) },
                "the client moves to the other broker within 2 s of the active bus's host dying")
            #expect(kills.allSatisfy { $0.flowing < .seconds(2) }, "requests flow again within 2 s of the active bus's host dying")
            // Orders' answer also waits for orders' own queue, seconds long in the booking burst (`ordersBefore`).
            #expect(
                FailoverSample.median(kills.map(\.orders)) < .seconds(2),
                "orders answers within 2 s of the active bus's host dying, at the median")
        }
    }
}

/// One kill of the active bus, as `theActiveBusHostKilledTenTimesLosesNoRide` times it.
struct FailoverSample {
    /// From the kill until the client went through the other broker.
    var moved: Duration
    /// From the kill until a request (`users.ping`) was answered through the other broker.
    var flowing: Duration
    /// From the kill until `orders.events`, sent with it, was answered.
    var orders: Duration
    /// How long `orders.events` took just before the kill (no failover).
    var ordersBefore: Duration

    static func median(_ durations: [Duration]) -> Duration { durations.sorted()[durations.count / 2] }

    static func report(_ kills: [FailoverSample]) -> String {
        func summary(_ durations: [Duration]) -> String {
            "p50 \(median(durations).milliseconds) ms, max \(durations.max()!.milliseconds) ms"
        }
        let each = kills.map {
            "\($0.moved.milliseconds) / \($0.flowing.milliseconds) / \($0.orders.milliseconds) (\($0.ordersBefore.milliseconds))"
        }
        return """
            hosts test — bus failover over \(kills.count) kills: requests flow again \(summary(kills.map(\.flowing))); \
            client moved \(summary(kills.map(\.moved))); orders answered \(summary(kills.map(\.orders))), \
            just before the kill \(summary(kills.map(\.ordersBefore)))
              each, in kill order, moved / flowing / orders (orders before) ms: \(each.joined(separator: ", "))
            """
    }
}

/// The workers of each service on the bus whose /health is `busHealthURL`.
func registeredWorkers(busHealthURL: String) async throws -> [String: Int] {
    let health = try JSONCoding.decode(JSONValue.self, from: Array(try await HTTPProbe.get(busHealthURL).body))
    guard case .object(let services)? = health["details"]?["services"] else { return [:] }
    return services.compactMapValues { $0["workers"]?.numberValue.map { Int($0) } }.filter { $0.value > 0 }
}
