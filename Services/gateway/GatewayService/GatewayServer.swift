import Bus
import Foundation
import Hummingbird
import HummingbirdWebSocket
import Logging
import RideContract
import RideModels
import ServiceKit
import ServiceLifecycle
import Wire

/// The running gateway: one Hummingbird application for the apps (REST, WebSocket, pages) and
/// the usual /health + /metrics listener.
public struct GatewayServer: Sendable {
    public let settings: GatewaySettings

    public init(settings: GatewaySettings) { self.settings = settings }

    public func run() async throws {
        let settings = self.settings
        let host = ServiceHost(program: "ride-gateway", service: "gateway", http: settings.http, logFormat: settings.logFormat, logLevel: settings.logLevel)
        let logger = host.logger
        let client = try await ServiceClient(broker: settings.broker, logger: logger)
        let platform = PlatformCalls(client: client)
        let subscriber = try await EventSubscriber<JSONValue>(endpoint: settings.sub, prefixes: [Events.orderRoot, Events.tripETA.topic], logger: logger)
        let hub = LiveHub(subscriber: subscriber, platform: platform, logger: logger)
        let gateway = GatewayApplication(settings: settings, platform: platform, hub: hub)
        let app = Application(
            router: gateway.router(),
            server: .http1WebSocketUpgrade(webSocketRouter: gateway.webSocketRouter()),
            configuration: .init(address: .hostname(settings.listen.host, port: settings.listen.port), serverName: "ride-gateway"),
            onServerRunning: { channel in
                logger.info(
                    "gateway ready",
                    metadata: [
                        "apps": "http://\(settings.listen.host):\(channel.localAddress?.port ?? settings.listen.port)",
                        "public_url": "\(settings.publicURL)", "broker": "\(settings.broker)",
                    ])
            },
            logger: logger)
        let closing = ShutdownHook {
            await client.close()
            logger.info("gateway stopped")
        }
        try await host.run(
            [closing, LiveHubService(hub: hub, subscriber: subscriber), app], ready: nil,
            addresses: "\(settings.listen) (--listen) or \(settings.http) (--http)"
        ) {
            host.health(["live_connections": .number(Double(await hub.connectionCount))])
        }
    }
}

/// The gateway's routes, apart from the process around them (tests build it on their own).
struct GatewayApplication: Sendable {
    let settings: GatewaySettings
    let platform: PlatformCalls
    let hub: LiveHub
    let tokens = TokenCache()
    let registry = RouteRegistry()

    func router() -> Router<GatewayContext> {
        let router = Router(context: GatewayContext.self)
        router.add(middleware: ErrorJSONMiddleware())
        let open = RecordedRoutes(group: router.group("v1"), prefix: "/v1", registry: registry)
        let authenticated = RecordedRoutes(
            group: router.group("v1").add(middleware: BearerAuthentication(platform: platform, cache: tokens)),
            prefix: "/v1", registry: registry)
        AppRoutes(platform: platform, tokens: tokens, settings: settings).register(public: open, authenticated: authenticated)
        let root = RecordedRoutes(group: router.group(""), prefix: "", registry: registry)
        root.on(.get, "openapi.json") { _, _ in
            Response(status: .ok, headers: [.contentType: "application/json; charset=utf-8"], body: .init(byteBuffer: ByteBuffer(string: OpenAPIDocument.json)))
        }
        ShareRoutes(platform: platform, settings: settings).register(data: open, pages: root)
        let hyperTrack = RecordedRoutes(
            group: router.group("").add(middleware: BasicAuthentication(accountID: settings.accountID, secretKey: settings.secretKey)),
            prefix: "", registry: registry)
        HyperTrackRoutes(platform: platform, settings: settings).register(on: hyperTrack)
        DashboardRoutes(platform: platform).register(on: hyperTrack)
        // The WebSocket routes asked without an upgrade: authenticated like the rest (401 without a
        // token), then 426 saying how to connect.
        for path in LiveRoute.paths {
            authenticated.group.get(RouterPath(path)) { _, _ -> Response in
                throw GatewayError(
                    .upgradeRequired, "upgrade_required", "/v1/\(path) is a WebSocket: connect with Upgrade: websocket",
                    headers: [.upgrade: "websocket"])
            }
        }
        var methods = registry.methodsByPath
        for path in LiveRoute.paths { methods["/v1/\(path)", default: []].insert("GET") }
        router.refuseOtherMethods(of: methods)
        return router
    }

    func webSocketRouter() -> Router<GatewayContext> {
        let router = Router(context: GatewayContext.self)
        router.add(middleware: ErrorJSONMiddleware())
        // Authenticated after the upgrade (see LiveRoute), so no middleware here.
        let live = RecordedRoutes(group: router.group("v1"), prefix: "/v1", registry: registry)
        let route = LiveRoute(platform: platform, hub: hub, authentication: BearerAuthentication(platform: platform, cache: tokens))
        route.register(on: live)
        route.registerNotifications(on: live)
        return router
    }
}
