import Foundation
import PlatformLauncher
import Testing
import Wire

extension HostsIntegrationTests {
    /// A bus of two instances on hosts of their own (`bus`, `bus-2`; docs/operations.md, "Two
    /// buses"). Ten times during the rides, the host of the broker this test's client goes through
    /// is cut off and its bus killed; the time until a request sent at that moment is answered
    /// (through the other broker) is the failover time. The host is then healed, its bus started
    /// again, and every service registered with it again before the next kill, which therefore
    /// alternates between the two.
    @Test func theActiveBusHostKilledTenTimesLosesNoRide() async throws {
        try await ridesSurvive("the active bus's host cut off and its bus killed, ten times", seconds: 150, buses: ["bus", "bus-2"]) { hosts, platform, _, _ in
            let bus = platform.bus
            let client = try await bus.client(timeout: .seconds(5), attempts: 3)
            guard let failover = client.failover else { throw TestFailure("no failover client for the bus address \(bus.broker)") }
            func healthURL(_ instance: String) -> String { "http://\(bus.host(of: instance).address):\(bus.httpPort)/health" }
            var failovers: [Duration] = []
            for _ in 1...10 {
                let active = failover.activeEndpoint
                guard let killed = bus.instances.first(where: { active.hasPrefix("tcp://\(bus.host(of: $0).address):") }) else {
                    throw TestFailure("the client goes through \(active), which is none of \(bus.broker)")
                }
                let other = try #require(bus.instances.first { $0 != killed })
                let services = try await registeredServices(busHealthURL: healthURL(other))
                try await hosts.cut(hosts[killed])
                bus.supervisor.signal(killed, SIGKILL)
                let killedAt = ContinuousClock.now
                let reply = try await client.callRaw("orders", "events", json: Array(#"{"after":0,"limit":1}"#.utf8))
                failovers.append(ContinuousClock.now - killedAt)
                #expect(reply.status == 200, "orders answers through \(other): \(reply.status)")
                try await hosts.heal(hosts[killed])
                try await bus.startProcess(killed)
                let restarted = healthURL(killed)
                try await eventually("every service registered with \(killed) again", timeout: .seconds(60)) {
                    (try? await registeredServices(busHealthURL: restarted)).map(services.isSubset) ?? false
                }
            }
            await client.close()
            let seconds = failovers.map { Double($0.components.seconds) + Double($0.components.attoseconds) / 1e18 }.sorted()
            print(
                "hosts test — bus failover over \(seconds.count) kills: p50 \(Int(seconds[seconds.count / 2] * 1000)) ms, max \(Int(seconds.last! * 1000)) ms "
                    + "(each: \(seconds.map { "\(Int($0 * 1000))" }.joined(separator: ", ")) ms)")
            #expect(seconds.last! < 2, "requests flow again within 2 s of the active bus's host dying")
        }
    }
}

/// The services with workers on the bus whose /health is `busHealthURL`.
func registeredServices(busHealthURL: String) async throws -> Set<String> {
    let health = try JSONCoding.decode(JSONValue.self, from: Array(try await HTTPProbe.get(busHealthURL).body))
    guard case .object(let services)? = health["details"]?["services"] else { return [] }
    return Set(services.filter { ($0.value["workers"]?.numberValue ?? 0) > 0 }.keys)
}
