import Bus
import Testing

/// The compose file's two buses (docs/operations.md, Two buses): the same process twice, and every
/// service naming both, so that either may stop.
extension ComposeTests {
    @Test func everyServiceNamesBothBusesAndWaitsForThem() throws {
        let services = try Self.services()
        let buses = services.filter { $0.command[0] == "ride-bus" }
        #expect(buses.map(\.name) == ["bus", "bus-2"], "two buses")
        #expect(Set(buses.map(\.command)).count == 1 && Set(buses.map(\.environment)).count == 1, "the same process twice")
        let hostPorts = services.flatMap(\.ports).map { $0.split(separator: ":").dropLast().joined(separator: ":") }
        #expect(Set(hostPorts).count == hostPorts.count, "no host port published twice: \(hostPorts.sorted())")
        let bus = try #require(buses.first)
        for service in services where !buses.map(\.name).contains(service.name) {
            for (variable, flag) in [("RIDE_BUS_PUB", "--pub"), ("RIDE_BUS_SUB", "--sub"), ("RIDE_BROKER", "--broker")] {
                let port = Self.port(of: flag, in: bus.command) ?? ""
                let endpoints = BusAddress.endpoints(service.environment[variable] ?? "")
                #expect(
                    endpoints == buses.map { "tcp://\($0.name):\(port)" }, "service \(service.name): \(variable) names every bus's \(flag)")
            }
            #expect(
                Set(buses.map(\.name)).isSubset(of: service.dependsOn), "service \(service.name) waits for both buses: \(service.dependsOn)"
            )
        }
    }
}
