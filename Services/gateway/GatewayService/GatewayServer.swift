import Bus
import Cities
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
        let host = ServiceHost(.gateway, settings: settings)
        let logger = host.logger
        let city = try settings.city.load()
        if city.places == nil {
            logger.warning("the city has no places: the /v1/places routes answer 503", metadata: ["city": "\(city.manifest.name)"])
        }
        logger.info("city loaded", metadata: ["city": "\(city.summary)", "from": "\(city.origin)"])
        let client = try await host.client(broker: settings.broker)
        let platform = PlatformCalls(client: client)
        let subscriber = try await EventSubscriber<JSONValue>(
            endpoint: settings.sub, prefixes: LiveHub.prefixes, options: .platform, logger: logger)
        host.needsBus([subscriber], at: settings.sub)
        let hub = LiveHub(subscriber: subscriber, platform: platform, logger: logger)
        let gateway = GatewayApplication(settings: settings, city: city, platform: platform, hub: hub)
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
    var tokens: TokenCache { hub.tokens }
    let rejections = RejectionLog()
    let photoRejections = RejectionLog()
    let registry = RouteRegistry()
    let limits: RateLimits
    let identity: IdentityVerifiers
    /// The street map and places served (`--city`).
    let city: CityBundle

    /// - Parameter clock: the rate limits' time (a test's own clock makes their refills exact).
    init(
        settings: GatewaySettings, city: CityBundle, platform: PlatformCalls, hub: LiveHub,
        clock: @escaping @Sendable () -> ContinuousClock.Instant = { .now }
    ) {
        self.settings = settings
        self.city = city
        self.platform = platform
        self.hub = hub
        limits = RateLimits(policy: settings.edge.limits, forwardedForHops: settings.edge.forwardedForHops, clock: clock)
        identity = IdentityVerifiers(settings.identity)
    }

    func router() -> Router<GatewayContext> {
        let router = Router(context: GatewayContext.self)
        router.add(middleware: MetricsMiddleware())  // ride_gateway_http_* (RideMetric)
        // Outside the error middleware, so error replies are inside the request's span too.
        GatewayTracing.add(to: router)
        router.add(middleware: SecurityHeadersMiddleware())
        router.add(middleware: CORSMiddleware(policy: settings.edge.corsOrigins))
        router.add(middleware: ErrorJSONMiddleware())
        router.add(middleware: RequestTimeoutMiddleware(timeout: settings.edge.requestTimeout))
        router.add(middleware: CallRetriesMiddleware())
        router.add(middleware: MethodNotAllowedMiddleware(registry: registry))
        let open = RecordedRoutes(group: router.group("v1"), prefix: "/v1", security: .none, registry: registry)
        let authenticated = RecordedRoutes(
            group: router.group("v1").add(
                middleware: BearerAuthentication(platform: platform, cache: tokens, limits: limits, rejections: rejections)),
            prefix: "/v1", security: .bearer, registry: registry)
        AppRoutes(platform: platform, tokens: tokens, limits: limits, settings: settings).register(
            public: open, authenticated: authenticated)
        PlaceRoutes(index: city.places).register(on: authenticated)
        PhotoRoutes(platform: platform, tokens: tokens, limits: limits, rejections: photoRejections).register(
            public: open, authenticated: authenticated)
        StreetRoutes(streets: city.streets, limits: limits).register(on: open)
        IdentityRoutes(platform: platform, verifiers: identity, limits: limits, rejections: rejections).register(
            public: open, authenticated: authenticated)
        let root = RecordedRoutes(group: router.group(""), prefix: "", security: .none, registry: registry)
        let registry = self.registry
        root.on(
            .get, "openapi.json",
            RouteDoc(
                "This document", tag: .meta, replies: [.init(status: 200, description: "OpenAPI 3.1", content: .json(.map(.any)))],
                callsServices: false)
        ) { _, _ in
            JSONBody.response(status: .ok, bytes: try JSONCoding.encode(APIDocument.build(registry.all, version: PlatformVersion.current)))
        }
        ShareRoutes(platform: platform, settings: settings, limits: limits).register(data: open, pages: root)
        WebAppRoutes(centre: WebAppRoutes.centre(of: city.roads)).register(on: root)
        let basic = BasicAuthentication(accountID: settings.accountID, secretKey: settings.secretKey, limits: limits)
        let hyperTrack = RecordedRoutes(
            group: router.group("").add(middleware: CrossSiteRequestGuard()).add(middleware: basic), prefix: "", security: .basic,
            registry: registry)
        HyperTrackRoutes(platform: platform, settings: settings).register(on: hyperTrack)
        let sessions = OperatorSessions(secretKey: settings.secretKey)
        DashboardSignIn(accountID: settings.accountID, secretKey: settings.secretKey, sessions: sessions, limits: limits).register(
            on: RecordedRoutes(
                group: router.group("").add(middleware: CrossSiteRequestGuard()), prefix: "", security: .none, registry: registry))
        let dashboard = RecordedRoutes(
            group: router.group("").add(middleware: CrossSiteRequestGuard()).add(
                middleware: OperatorAuthentication(basic: basic, sessions: sessions)),
            prefix: "", security: .operator, registry: registry)
        DashboardRoutes(platform: platform, tokens: tokens).register(on: dashboard)
        DocumentRoutes(platform: platform, tokens: tokens).register(authenticated: authenticated, dashboard: dashboard)
        // The WebSocket routes asked without an upgrade: authenticated like the rest (401 without a
        // token), then 426 saying how to connect.
        for (path, doc) in LiveRoute.paths {
            authenticated.on(.get, path, doc) { request, _ -> Response in
                try doc.checkQuery(of: request)
                throw GatewayError(
                    .upgradeRequired, "upgrade_required", "/v1/\(path) is a WebSocket: connect with Upgrade: websocket",
                    headers: [.upgrade: "websocket"])
            }
        }
        return router
    }

    func webSocketRouter() -> Router<GatewayContext> {
        let router = Router(context: GatewayContext.self)
        router.add(middleware: ErrorJSONMiddleware())
        // Authenticated after the upgrade (see LiveRoute), so no middleware here.
        // Recorded in the API document by `router()`, which answers their plain GETs.
        let live = router.group("v1")
        let route = LiveRoute(
            platform: platform, hub: hub,
            authentication: BearerAuthentication(platform: platform, cache: tokens, limits: limits, rejections: rejections),
            recheck: settings.edge.socketRecheck, sockets: SocketAllowance(perUser: settings.edge.socketsPerUser),
            idle: settings.edge.socketIdle,
            devices: DeviceBatches(platform: platform, publishableKey: settings.publishableKey))
        route.register(on: live)
        route.registerNotifications(on: live)
        return router
    }
}
