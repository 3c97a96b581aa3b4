import PlatformLauncher
import Testing

@testable import RideCtlKit

/// `ridectl up --replicas`: which services may run as several instances, and how they are started.
@Suite struct ReplicasTests {
    @Test func extraInstancesFollowTheFirstWithTheirOwnHealthPort() throws {
        let processes = Platform.withReplicas(
            Platform.processes(binDirectory: "/bin", dataDirectory: "/data"), try Platform.parseReplicas("orders=3,trips=1"))
        #expect(
            processes.map(\.name) == ["bus", "users", "tracking", "trips", "orders", "orders-2", "orders-3", "notifications", "gateway"])
        let orders = processes.filter { $0.name.hasPrefix("orders") }
        #expect(
            orders.map(\.healthURL) == ["http://127.0.0.1:9102/health", "http://127.0.0.1:9202/health", "http://127.0.0.1:9302/health"])
        #expect(
            Set(orders.map { $0.arguments.filter { $0 != "127.0.0.1:9102" && $0 != "127.0.0.1:9202" && $0 != "127.0.0.1:9302" } }).count
                == 1,
            "the same flags (one data directory) but the health address")
    }

    @Test func badReplicaSettingsAreNamed() throws {
        for (text, message) in [
            ("bus=2", "'bus' cannot run as several instances here; these can: users, orders, trips, notifications"),
            ("orders=9", "'orders=9' must be SERVICE=COUNT with a count from 1 to 8 (e.g. orders=3)"),
            ("orders", "'orders' must be SERVICE=COUNT with a count from 1 to 8 (e.g. orders=3)"),
        ] {
            #expect(throws: Platform.ReplicasError.self) { try Platform.parseReplicas(text) }
            #expect((try? Platform.parseReplicas(text)) == nil)
            do { _ = try Platform.parseReplicas(text) } catch { #expect("\(error)" == message) }
        }
        #expect(try Platform.parseReplicas("") == [:])
    }

    @Test func trackingShardsEachHaveTheirOwnIngestAndHealthPortAndNoOtherProcessMoves() throws {
        let unsharded = Platform.processes(binDirectory: "/bin", dataDirectory: "/data")
        #expect(unsharded.first { $0.name == "tracking" }?.arguments.contains("--shard") == false, "one shard: today's flags")
        let processes = Platform.processes(binDirectory: "/bin", dataDirectory: "/data", trackingShards: 2)
        #expect(processes.map(\.name) == ["bus", "users", "tracking", "tracking-1", "trips", "orders", "notifications", "gateway"])
        let shards = processes.filter { $0.name.hasPrefix("tracking") }
        #expect(shards[0].arguments.suffix(2) == ["--shard", "0/2"] && shards[1].arguments.suffix(2) == ["--shard", "1/2"])
        #expect(shards[0].arguments.contains("tcp://127.0.0.1:5558") && shards[1].arguments.contains("tcp://127.0.0.1:5658"))
        #expect(shards.map(\.healthURL) == ["http://127.0.0.1:9104/health", "http://127.0.0.1:9204/health"])
        let others = { (list: [PlatformProcess]) in list.filter { !$0.name.hasPrefix("tracking") }.map(\.arguments) }
        #expect(others(processes) == others(unsharded))
        #expect(Platform.trackingIngestEndpoints(shards: 2, portOffset: 1000) == ["tcp://127.0.0.1:6558", "tcp://127.0.0.1:6658"])
    }
}
