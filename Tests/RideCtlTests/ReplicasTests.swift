import Testing

@testable import RideCtlKit

/// `ridectl up --replicas`: which services may run as several instances, and how they are started.
@Suite struct ReplicasTests {
    @Test func extraInstancesFollowTheFirstWithTheirOwnHealthPort() throws {
        let processes = Platform.withReplicas(Platform.processes(binDirectory: "/bin", dataDirectory: "/data"), try Platform.parseReplicas("orders=3,trips=1"))
        #expect(processes.map(\.name) == ["bus", "users", "tracking", "trips", "orders", "orders-2", "orders-3", "notifications", "gateway"])
        let orders = processes.filter { $0.name.hasPrefix("orders") }
        #expect(orders.map(\.healthURL) == ["http://127.0.0.1:9102/health", "http://127.0.0.1:9202/health", "http://127.0.0.1:9302/health"])
        #expect(Set(orders.map { $0.arguments.filter { $0 != "127.0.0.1:9102" && $0 != "127.0.0.1:9202" && $0 != "127.0.0.1:9302" } }).count == 1,
                "the same flags (one data directory) but the health address")
    }

    @Test func badReplicaSettingsAreNamed() throws {
        for (text, message) in [("bus=2", "'bus' cannot run as several instances here; these can: users, orders, trips, notifications"),
                                ("orders=9", "'orders=9' must be SERVICE=COUNT with a count from 1 to 8 (e.g. orders=3)"),
                                ("orders", "'orders' must be SERVICE=COUNT with a count from 1 to 8 (e.g. orders=3)")] {
            #expect(throws: Platform.ReplicasError.self) { try Platform.parseReplicas(text) }
            #expect((try? Platform.parseReplicas(text)) == nil)
            do { _ = try Platform.parseReplicas(text) } catch { #expect("\(error)" == message) }
        }
        #expect(try Platform.parseReplicas("") == [:])
    }
}
