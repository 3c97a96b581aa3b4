import Bus
import Foundation
import RideContract
import Testing
import Wire

/// The contract against the running services: each answers `ping` with exactly the ops the
/// contract declares for it, so an op registered and not declared (never fuzzed, never documented)
/// or declared and not registered fails here.
@Suite struct ContractIntegrationTests {
    @Test func everyServiceAnswersExactlyTheOpsOfTheContract() async throws {
        try await withTestBus("contract") { bus in
            _ = try await GatewayIntegrationTests.Apps.start(bus)
            _ = try await TestService.start(on: bus, service: BusContract.Service.notifications, executable: "ride-notifications")
            let client = try await bus.client(timeout: .seconds(5))
            defer { Task { await client.close() } }
            for service in BusContract.Service.all {
                let ping = try await client.call(service, "ping", NoParams(), as: PingReply.self)
                let declared = (RideContract.ops(of: service).map(\.name) + ["ping"]).sorted()
                #expect(ping.ops == declared, "\(service) registers \(ping.ops), the contract declares \(declared)")
            }
        }
    }
}
