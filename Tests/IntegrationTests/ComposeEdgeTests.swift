import Foundation
import Testing

/// The compose file's edge (deploy/edge/haproxy.cfg): the apps' one host port, spread over however
/// many gateways run, agreeing with the gateway's own ports and its trust of one forwarding hop.
extension ComposeTests {
    static let edgeConfiguration = "deploy/edge/haproxy.cfg"

    /// The configuration's directives, comments and blank lines dropped.
    static func edgeDirectives() throws -> [String] {
        try String(contentsOf: root.appendingPathComponent(edgeConfiguration), encoding: .utf8)
            .split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty && !$0.hasPrefix("#") }
    }

    @Test func theEdgeSpreadsTheAppsPortOverEveryGatewayAndTheGatewaysTrustOneHop() throws {
        let edge = try #require(try Self.upstreamServices()["edge"], "docker-compose.yml has an edge")
        let volumes = (edge["volumes"] as? [Any])?.map { "\($0)" } ?? []
        #expect(
            volumes == ["./\(Self.edgeConfiguration):/usr/local/etc/haproxy/haproxy.cfg:ro"],
            "the edge reads \(Self.edgeConfiguration): \(volumes)")
        #expect((edge["depends_on"] as? [String: Any])?.keys.contains("gateway") == true, "the edge starts once a gateway is healthy")

        let gateway = try #require(try Self.services().first { $0.name == "gateway" })
        let listen = try #require(Self.port(of: "--listen", in: gateway.command))
        let http = try #require(Self.httpPort(gateway.command))
        #expect(
            gateway.ports.isEmpty && gateway.expose.contains(listen),
            "the gateway is reached through the edge only: \(gateway.ports), \(gateway.expose)")
        #expect(gateway.environment["RIDE_FORWARDED_FOR_HOPS"] == "1", "the gateways read the client's address the edge appends")

        let directives = try Self.edgeDirectives()
        #expect(directives.contains("bind :\(listen)"), "the edge listens on the published port \(listen)")
        #expect(directives.contains("option forwardfor"), "the edge appends the client's address (X-Forwarded-For)")
        #expect(
            directives.contains { $0.hasPrefix("server-template ") && $0.hasSuffix(" gateway:\(listen)") },
            "every replica of the gateway, found by name")
        #expect(directives.contains { $0.hasPrefix("default-server check port \(http) ") }, "each gateway checked on its --http \(http)")
        #expect(
            directives.contains("option httpchk GET /readyz") && gateway.healthcheck?.last?.hasSuffix("/readyz") == true,
            "a gateway takes requests once ready, as its healthcheck says")
        #expect(directives.contains("parse-resolv-conf"), "new replicas found by the compose network's DNS")
    }
}
