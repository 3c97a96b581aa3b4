import Foundation
import PlatformLauncher
import Testing
import Wire
import ZeroMQ

extension HostsIntegrationTests {
    /// A bus of two instances on hosts of their own (`bus`, `bus-2`; docs/operations.md, "Two
    /// buses"). Ten times during the rides, the host of the broker this test's client goes through
    /// is cut off and its bus killed; the time until a request sent at that moment is answered
    /// (through the other broker) is the failover time. The host is then healed, its bus started
    /// again, and every worker registered with it again before the next kill, which therefore
    /// alternates between the two.
    @Test func theActiveBusHostKilledTenTimesLosesNoRide() async throws {
        try await ridesSurvive("the active bus's host cut off and its bus killed, ten times", seconds: 150, buses: ["bus", "bus-2"]) { hosts, platform, _, _ in
            let bus = platform.bus
            let client = try await bus.client(timeout: .seconds(5), attempts: 3)
            guard let failover = client.failover else { throw TestFailure("no failover client for the bus address \(bus.broker)") }
            func healthURL(_ instance: String) -> String { "http://\(bus.host(of: instance).address):\(bus.httpPort)/health" }
            var failovers: [Duration] = []
            var detections: [Duration] = []
            for _ in 1...10 {
                let active = failover.activeEndpoint
                guard let killed = bus.instances.first(where: { active.hasPrefix("tcp://\(bus.host(of: $0).address):") }) else {
                    throw TestFailure("the client goes through \(active), which is none of \(bus.broker)")
                }
                let other = try #require(bus.instances.first { $0 != killed })
                let workers = try await registeredWorkers(busHealthURL: healthURL(other))
                try await hosts.cut(hosts[killed])
                bus.supervisor.signal(killed, SIGKILL)
                let killedAt = ContinuousClock.now
                // When the client moved to the other broker, apart from when the request was answered there.
                let moved = Task {
                    while failover.activeEndpoint == active, !Task.isCancelled { try? await Task.sleep(for: .milliseconds(5)) }
                    return ContinuousClock.now - killedAt
                }
                let reply = try await client.callRaw("orders", "events", json: Array(#"{"after":0,"limit":1}"#.utf8))
                failovers.append(ContinuousClock.now - killedAt)
                moved.cancel()
                detections.append(await moved.value)
                #expect(reply.status == 200, "orders answers through \(other): \(reply.status)")
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
            let answered = failovers.map(\.milliseconds).sorted()
            print(
                "hosts test — bus failover over \(answered.count) kills: p50 \(answered[answered.count / 2]) ms, max \(answered.last!) ms "
                    + "(each, in kill order, moved / answered: \(zip(detections, failovers).map { "\($0.milliseconds) / \($1.milliseconds)" }.joined(separator: ", ")) ms)")
            #expect(detections.allSatisfy { $0 < .seconds(2) }, "the client moves to the other broker within 2 s of the active bus's host dying")
            // Not yet every time: after one to three kills of ten the request waits 1–2.5 s more behind
            // orders' queue on the other bus (docs/operations.md, "Two buses"; issue 26).
            #expect(answered[answered.count / 2] < 2000, "requests flow again within 2 s of the active bus's host dying, at the median")
        }
    }
}

/// The workers of each service on the bus whose /health is `busHealthURL`.
func registeredWorkers(busHealthURL: String) async throws -> [String: Int] {
    let health = try JSONCoding.decode(JSONValue.self, from: Array(try await HTTPProbe.get(busHealthURL).body))
    guard case .object(let services)? = health["details"]?["services"] else { return [:] }
    return services.compactMapValues { $0["workers"]?.numberValue.map { Int($0) } }.filter { $0.value > 0 }
}
