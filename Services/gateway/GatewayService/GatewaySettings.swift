import ArgumentParser
import Bus
import Cities
import Foundation
import RideContract
import ServiceKit
import SettingsKit
import Wire

/// `ride-gateway`'s flags. Each has an environment variable; a flag wins over its variable.
public struct RideGatewayCommand: ServiceCommand {
    public static let configuration = CommandConfiguration(
        commandName: "ride-gateway",
        abstract:
            "The apps' door: the REST API under /v1, live order updates over WebSocket, HyperTrack-compatible trip routes, share pages and the dashboard.",
        discussion: """
            Serves HTTP on --listen (default 0.0.0.0:\(PlatformPorts.gateway)): the REST API for rider and driver apps \
            under /v1 (bearer tokens from ride-users), the WebSocket /v1/orders/{id}/live, the \
            OpenAPI document at /openapi.json, HyperTrack v3 routes (/trips/, /devices/nearby) with \
            HTTP Basic auth, share pages at /<share id> and the operator dashboard at /dashboard. \
            Stores nothing: every request becomes ops on the bus. --http (default \(RideProcess.gateway.httpDefault)) \
            serves /health and /metrics.

            \(ExitCodes.help())
            """,
        version: PlatformVersion.current
    )

    public static let busRole: HeldRole? = Roles.gateway.held
    typealias Keys = GatewaySettingKeys

    @OptionGroup var bus: BusClientOptions

    @Option(name: Keys.listen.name, help: Keys.listen.help) var listen: String?
    @Option(name: Keys.publicURL.name, help: Keys.publicURL.help) var publicURL: String?
    @Option(name: Keys.publishableKey.name, help: Keys.publishableKey.help) var publishableKey: String?
    @Option(name: Keys.accountID.name, help: Keys.accountID.help) var accountID: String?
    @Option(name: Keys.secretKey.name, help: Keys.secretKey.help) var secretKey: String?
    @Option(name: Keys.corsOrigins.name, help: Keys.corsOrigins.help) var corsOrigins: String?
    @Option(name: Keys.socketRecheckSeconds.name, help: Keys.socketRecheckSeconds.help) var socketRecheckSeconds: Int?
    @Option(name: Keys.socketsPerUser.name, help: Keys.socketsPerUser.help) var socketsPerUser: Int?
    @Option(name: Keys.socketIdleSeconds.name, help: Keys.socketIdleSeconds.help) var socketIdleSeconds: Int?
    @Option(name: Keys.requestTimeoutSeconds.name, help: Keys.requestTimeoutSeconds.help) var requestTimeoutSeconds: Int?
    @Option(name: Keys.addressAttempts.name, help: Keys.addressAttempts.help) var addressAttempts: Int?
    @Option(name: Keys.addressInvalidTokens.name, help: Keys.addressInvalidTokens.help) var addressInvalidTokens: Int?
    @Option(name: Keys.addressShareReads.name, help: Keys.addressShareReads.help) var addressShareReads: Int?
    @Option(name: Keys.accountAttempts.name, help: Keys.accountAttempts.help) var accountAttempts: Int?
    @Option(name: Keys.tokenRequests.name, help: Keys.tokenRequests.help) var tokenRequests: Int?
    @Option(name: Keys.forwardedForHops.name, help: Keys.forwardedForHops.help) var forwardedForHops: Int?
    @Option(name: Keys.hyperTrackWebhookSecret.name, help: Keys.hyperTrackWebhookSecret.help) var hyperTrackWebhookSecret: String?

    @OptionGroup var identity: IdentityProviderOptions

    @OptionGroup var city: CityOptions

    @OptionGroup public var common: CommonOptions

    @Option(
        name: .customLong("print"),
        help:
            "Print the gateway's API instead of serving it, and exit: openapi (the document /openapi.json serves), routes (the table of routes in docs/services/gateway.md) or live (its table of live messages)."
    )
    var printed: GatewayDocument?

    public init() {}

    public func run() async throws {
        switch printed {
        case .openapi: print(String(decoding: try JSONCoding.encode(try await GatewayAPI.document()), as: UTF8.self))
        case .routes: print(try await GatewayAPI.routeTable())
        case .live: print(GatewayAPI.liveMessageTable)
        case nil: try await runService()
        }
    }

    public static func serve(_ settings: GatewaySettings) async throws {
        try await GatewayServer(settings: settings).run()
    }

    public func settings() throws -> GatewaySettings {
        let listen = try HostPort.parse(Keys.listen.resolve(listen), name: "listen address")
        let urlSetting = Keys.publicURL.resolve(publicURL, default: "http://localhost:\(listen.port)")
        guard let url = URL(string: urlSetting.value), url.scheme == "http" || url.scheme == "https", url.host != nil else {
            throw ConfigurationError("public URL (\(urlSetting.origin)) '\(urlSetting.value)' must be an http:// or https:// URL")
        }
        let key = Keys.publishableKey.resolve(publishableKey)
        let account = Keys.accountID.resolve(accountID)
        let secret = try Keys.secretKey.resolveSecret(secretKey)
        for (setting, name) in [(key, "publishable key"), (account, "account id"), (secret, "secret key")]
        where setting.value.isEmpty || setting.value.contains(":") {
            throw ConfigurationError("\(name) (\(setting.origin)) must be non-empty and without ':'")
        }
        let origins = Keys.corsOrigins.resolve(corsOrigins, default: "")
        let timeout = try Keys.requestTimeoutSeconds.value(requestTimeoutSeconds)
        let recheck = try Keys.socketRecheckSeconds.value(socketRecheckSeconds)
        let sockets = try Keys.socketsPerUser.value(socketsPerUser)
        let idle = try Keys.socketIdleSeconds.value(socketIdleSeconds)
        var limits = RateLimitPolicy()
        limits.attemptsPerAddress = RateLimit(perMinute: try Keys.addressAttempts.value(addressAttempts))
        limits.attemptsPerAccount = RateLimit(perMinute: try Keys.accountAttempts.value(accountAttempts))
        limits.invalidTokensPerAddress = RateLimit(perMinute: try Keys.addressInvalidTokens.value(addressInvalidTokens))
        limits.shareReadsPerAddress = RateLimit(perMinute: try Keys.addressShareReads.value(addressShareReads))
        limits.requestsPerToken = RateLimit(perMinute: try Keys.tokenRequests.value(tokenRequests))
        let webhookSecret = try Keys.hyperTrackWebhookSecret.resolveSecret(hyperTrackWebhookSecret)
        let hops = try Keys.forwardedForHops.value(forwardedForHops)
        return GatewaySettings(
            basics: try ServiceBasics(.gateway, bus: bus, common: common), listen: listen,
            publicURL: urlSetting.value.hasSuffix("/") ? String(urlSetting.value.dropLast()) : urlSetting.value,
            publishableKey: key.value, accountID: account.value, secretKey: secret.value,
            edge: EdgePolicy(
                corsOrigins: try CORSPolicy.parse(origins), requestTimeout: .seconds(timeout), limits: limits, forwardedForHops: hops,
                socketRecheck: .seconds(recheck), socketsPerUser: sockets, socketIdle: .seconds(idle)),
            identity: try identity.settings(),
            secretKeyOrigin: secret.origin, city: try city.setting(),
            hyperTrackWebhookSecret: webhookSecret.value.isEmpty ? nil : webhookSecret.value,
            hyperTrackWebhookSecretOrigin: webhookSecret.origin)
    }
}

/// `ride-gateway`'s resolved configuration.
public struct GatewaySettings: BusClientSettings {
    public var basics: ServiceBasics
    public var listen: HostPort
    /// Without a trailing slash.
    public var publicURL: String
    public var publishableKey: String
    public var accountID: String
    public var secretKey: String
    public var edge = EdgePolicy()
    /// Social sign-in's providers (`IdentityProviderOptions`).
    public var identity = IdentitySettings()
    /// Where the secret key came from, for the production check.
    public var secretKeyOrigin = "default"
    /// The city whose street map and places the gateway serves.
    public var city = CitySetting(path: nil)
    /// Signs HyperTrack's webhooks; nil: the endpoint is off.
    public var hyperTrackWebhookSecret: String?
    public var hyperTrackWebhookSecretOrigin = "default"

    public var secrets: [SecretSetting] {
        [SecretSetting(name: "secret key", origin: secretKeyOrigin, value: Array(secretKey.utf8), minimumLength: 16)]
            + (hyperTrackWebhookSecret.map {
                [
                    SecretSetting(
                        name: "HyperTrack webhook secret", origin: hyperTrackWebhookSecretOrigin, value: Array($0.utf8), minimumLength: 16)
                ]
            } ?? [])
    }

    public var summary: String {
        let limits = edge.limits
        return basics.summary(
            of: .gateway,
            [
                "apps": "http://\(listen) (public \(publicURL))",
                "hypertrack routes":
                    "account \(accountID), secret \(String(repeating: "*", count: min(8, secretKey.count))); webhooks "
                    + (hyperTrackWebhookSecret == nil ? "off" : "on (POST /v1/providers/hypertrack/webhook)"),
                "edge":
                    "CORS \(edge.corsOrigins.description), requests time out after \(edge.requestTimeout), "
                    + "sockets' tokens checked every \(edge.socketRecheck), \(edge.socketsPerUser) per user, closed after \(edge.socketIdle) quiet",
                "limits (per instance)":
                    "attempts \(limits.attemptsPerAddress) per address, \(limits.attemptsPerAccount) per account; "
                    + "\(limits.requestsPerToken) per user; invalid tokens \(limits.invalidTokensPerAddress) per address; "
                    + "share reads \(limits.shareReadsPerAddress) per address; X-Forwarded-For hops \(edge.forwardedForHops)",
                "social sign-in": identity.summary,
                "city": "\(city) (street map, places)",
            ])
    }
}

/// What `ride-gateway --print` prints: the API as data, for `ridectl contract` and the docs.
public enum GatewayDocument: String, ExpressibleByArgument, CaseIterable, Sendable {
    case openapi, routes, live
}
