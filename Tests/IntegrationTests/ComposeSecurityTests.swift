import Foundation
import Testing

/// docker-compose.yml secure by default (docs/operations.md, Securing the bus): only the apps' doors
/// on the host, CURVE on every process with a key of its own, and no way around it.
extension ComposeTests {
    /// The role a service's process runs as: its key's name (`ride-orders` → `orders`; the tools'
    /// ridectl → `operator`); nil for the bus, which only serves.
    static func role(of service: ComposeService) -> String? {
        switch service.command[0] {
        case "ride-bus": nil
        case "ridectl": "operator"
        case let executable: String(executable.dropFirst("ride-".count))
        }
    }

    /// The folder RIDE_CURVE_KEYS names inside every container.
    static let curveMount = "/run/secrets/curve"

    @Test func onlyTheEdgeAndTheDeviceIngestArePublishedOnTheHost() throws {
        var published: [String: [String]] = [:]
        for service in try Self.services() where !service.ports.isEmpty {
            published[service.name] = service.ports.map { String($0.split(separator: ":").last ?? "") }
        }
        let edge = try #require(try Self.upstreamServices()["edge"], "an edge in front of the gateways")
        published["edge"] = (edge["ports"] as? [Any])?.map { String("\($0)".split(separator: ":").last ?? "") }
        let services = try Self.services()
        let listen = try #require(services.first { $0.name == "gateway" }.flatMap { Self.port(of: "--listen", in: $0.command) })
        var expected = ["edge": [listen]]
        for shard in services where shard.command[0] == "ride-tracking" {
            expected[shard.name] = [try #require(Self.port(of: "--ingest", in: shard.command))]
        }
        #expect(expected.count == 3, "the edge and two tracking shards: \(expected)")
        #expect(published == expected, "published on the host: \(published)")
        // Health and metrics stay inside the network, where the healthchecks ask them.
        for service in services where service.profiles.isEmpty {
            let http = try #require(Self.httpPort(service.command), "\(service.name) sets --http")
            #expect(service.expose.contains(http), "\(service.name) exposes its --http \(http) inside the network: \(service.expose)")
        }
    }

    @Test func everyProcessHasItsOwnKeyAndNoOneElses() throws {
        let services = try Self.services()
        let files = try Self.secretFiles()
        let roles = Set(services.compactMap(Self.role))
        #expect(roles == ["users", "orders", "trips", "tracking", "notifications", "gateway", "operator"], "\(roles.sorted())")
        for service in services {
            #expect(service.environment["RIDE_CURVE_KEYS"] == Self.curveMount, "\(service.name) runs with CURVE")
            let mounts = service.mounts(under: Self.curveMount)
            // Each file mounted where its name says: clients/orders.key is the orders key's file.
            for (path, secret) in mounts {
                #expect(
                    files[secret]?.hasSuffix("/\(Self.curveKeysFolder)/\(path)") == true,
                    "\(service.name): \(path) mounts \(files[secret] ?? secret)")
            }
            let ownKey = Self.role(of: service).map { ["clients/\($0).key"] } ?? []
            let serves = ["ride-bus", "ride-tracking"].contains(service.command[0])
            #expect(
                Set(mounts.keys.filter { $0.hasSuffix(".key") }) == Set(ownKey + (serves ? ["server.key"] : [])),
                "\(service.name) holds only its own secret key\(serves ? " and the server's" : ""): \(mounts.keys.sorted())")
            let publicKeys = Set(mounts.keys.filter { $0.hasSuffix(".pub") })
            if service.command[0] == "ride-bus" {
                // Whom the bus admits: every role's key, and no other.
                #expect(publicKeys == Set(["server.pub"] + roles.map { "clients/\($0).pub" }), "\(service.name): \(publicKeys.sorted())")
            } else {
                #expect(publicKeys == ["server.pub"], "\(service.name) needs only the server's public key: \(publicKeys.sorted())")
            }
        }
    }

    /// Nothing tells a process to run a plain bus; the bus and the device ingest bind every
    /// interface of their containers, which without CURVE they would refuse (each process checks
    /// at start, `BusExposureIntegrationTests`; the whole file runs so in `ComposeAsProcessesTests`).
    @Test func noProcessIsToldToRunAPlainBus() throws {
        for service in try Self.services() {
            #expect(!service.command.contains("--insecure-bus") && service.environment["RIDE_INSECURE_BUS"] == nil, "\(service.name)")
            for variable in ["RIDE_CURVE_SERVER_KEY", "RIDE_CURVE_ALLOWED_KEYS", "RIDE_CURVE_CLIENT"] {
                #expect(service.environment[variable] == nil, "\(service.name): its keys come from its own files, not \(variable)")
            }
        }
    }
}
