import Bus
import Cities
import Logging
import ServiceKit
import Wire

/// The gateway's API as data, without serving it: the OpenAPI document and the docs' route table
/// (`ridectl contract`). Both come from the routes as the gateway registers them.
public enum GatewayAPI {
    /// `/openapi.json`.
    public static func document() async throws -> JSONValue {
        APIDocument.build(try await entries(), version: PlatformVersion.current)
    }

    /// The table of routes in docs/services/gateway.md.
    public static func routeTable() async throws -> String {
        var lines = ["| route | who | what | op |", "|---|---|---|---|"]
        for entry in try await entries() {
            let who =
                switch entry.security {
                case .none: "anyone"
                case .bearer: "a user (bearer token)"
                case .basic: "the operator (HTTP Basic)"
                case .operator: "the operator (HTTP Basic or a dashboard session)"
                }
            lines.append(
                "| `\(entry.method.rawValue) \(entry.path)` | \(who) | \(entry.doc.summary) | \(entry.doc.op.map { "`\($0)`" } ?? "") |")
        }
        return lines.joined(separator: "\n")
    }

    /// The table of live messages in docs/services/gateway.md.
    public static var liveMessageTable: String { LiveKinds.table }

    /// The routes, registered on an application whose client is never used.
    static func entries() async throws -> [RouteRegistry.Entry] {
        let (gateway, close) = try await offline(MDPClient.Options())
        _ = gateway.router()
        await close()
        return gateway.registry.all
    }

    /// The gateway's application on a bus nobody answers (its routes registered once `router()`
    /// runs), and how to close its sockets: for the document, and for tests of what is answered
    /// before any service is asked.
    static func offline(
        _ options: MDPClient.Options, arguments: [String] = [], clock: @escaping @Sendable () -> ContinuousClock.Instant = { .now }
    ) async throws -> (GatewayApplication, close: @Sendable () async -> Void) {
        let logger = Logger(label: "gateway-offline")
        let settings = try RideGatewayCommand.parse(["--broker", "tcp://127.0.0.1:1", "--sub", "tcp://127.0.0.1:1"] + arguments).settings()
        let client = try await ServiceClient(broker: settings.broker, options: options, logger: logger)
        let subscriber = try await EventSubscriber<JSONValue>(endpoint: settings.sub, prefixes: [], options: .platform, logger: logger)
        let platform = PlatformCalls(client: client)
        let gateway = GatewayApplication(
            settings: settings, city: try settings.city.load(), platform: platform,
            hub: LiveHub(subscriber: subscriber, platform: platform, logger: logger), clock: clock)
        return (
            gateway,
            {
                await subscriber.close()
                await client.close()
            }
        )
    }
}
