import ArgumentParser
import Bus
import Cities
import Foundation
import Logging
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

    @OptionGroup var bus: BusClientOptions

    @Option(
        name: .customLong("listen"),
        help: helpWithEnv(
            "Address of the apps' HTTP listener (HOST:PORT)", env: "RIDE_GATEWAY_LISTEN", default: "0.0.0.0:\(PlatformPorts.gateway)"))
    var listen: String?

    @Option(
        name: .customLong("public-url"),
        help: helpWithEnv(
            "The gateway's address as apps and browsers reach it, for share links", env: "RIDE_PUBLIC_URL",
            default: "http://localhost:<listen port>"))
    var publicURL: String?

    @Option(
        name: .customLong("publishable-key"),
        help: helpWithEnv(
            "Publishable key the gateway forwards location batches with", env: "RIDE_PUBLISHABLE_KEY",
            default: "pk_dev_ridesharing"))
    var publishableKey: String?

    @Option(
        name: .customLong("account-id"),
        help: helpWithEnv("HTTP Basic user of the HyperTrack-compatible routes", env: "RIDE_ACCOUNT_ID", default: "ridesharing"))
    var accountID: String?

    @Option(
        name: .customLong("secret-key"),
        help: helpWithEnv(
            "HTTP Basic password of the HyperTrack-compatible routes and the dashboard's API (or a file named by RIDE_SECRET_KEY_FILE)",
            env: "RIDE_SECRET_KEY",
            default: "sk_dev_ridesharing"))
    var secretKey: String?

    @Option(
        name: .customLong("cors-origins"),
        help: helpWithEnv(
            "Origins whose web pages may call the API and read the share data (comma-separated, e.g. https://app.example.com; * for any)",
            env: "RIDE_CORS_ORIGINS", default: "none: same origin only"))
    var corsOrigins: String?

    @Option(
        name: .customLong("socket-recheck-s"),
        help: helpWithEnv(
            "Seconds between checks of an open WebSocket's token: a logged-out, changed-password or expired one closes the socket (4401)",
            env: "RIDE_SOCKET_RECHECK_S", default: "10"))
    var socketRecheckSeconds: Int?

    @Option(
        name: .customLong("sockets-per-user"),
        help: helpWithEnv(
            "WebSockets one user may hold open on this instance; one more is refused (4429)", env: "RIDE_SOCKETS_PER_USER", default: "10"))
    var socketsPerUser: Int?

    @Option(
        name: .customLong("socket-idle-s"),
        help: helpWithEnv(
            "Seconds a WebSocket may send nothing before it is closed (4408; apps connect again)", env: "RIDE_SOCKET_IDLE_S", default: "900"
        ))
    var socketIdleSeconds: Int?

    @Option(
        name: .customLong("request-timeout-s"),
        help: helpWithEnv(
            "Seconds a request may take before it is answered 504 request_timeout (not the WebSockets)", env: "RIDE_REQUEST_TIMEOUT_S",
            default: "30"))
    var requestTimeoutSeconds: Int?

    @Option(
        name: .customLong("address-attempts-per-min"),
        help: helpWithEnv(
            "Sign-up, log-in and password attempts a client address may make per minute on this instance (see docs/services/gateway.md)",
            env: "RIDE_ADDRESS_ATTEMPTS_PER_MIN", default: RateLimitPolicy().attemptsPerAddress.description))
    var addressAttempts: Int?

    @Option(
        name: .customLong("address-invalid-tokens-per-min"),
        help: helpWithEnv(
            "Bearer tokens that are not the platform's (garbage, forged) a client address may send per minute on this instance before 429",
            env: "RIDE_ADDRESS_INVALID_TOKENS_PER_MIN", default: RateLimitPolicy().invalidTokensPerAddress.description))
    var addressInvalidTokens: Int?

    @Option(
        name: .customLong("address-share-reads-per-min"),
        help: helpWithEnv(
            "Reads of share data (/v1/shares/…, /v1/ride-shares/…) a client address may make per minute on this instance (a share page reads once a second)",
            env: "RIDE_ADDRESS_SHARE_READS_PER_MIN", default: RateLimitPolicy().shareReadsPerAddress.description))
    var addressShareReads: Int?

    @Option(
        name: .customLong("account-attempts-per-min"),
        help: helpWithEnv(
            "Sign-up, log-in and password attempts on one account (a phone number, a user) per minute on this instance",
            env: "RIDE_ACCOUNT_ATTEMPTS_PER_MIN",
            default: RateLimitPolicy().attemptsPerAccount.description))
    var accountAttempts: Int?

    @Option(
        name: .customLong("token-requests-per-min"),
        help: helpWithEnv(
            "Requests one user may make per minute on this instance, all their tokens together", env: "RIDE_TOKEN_REQUESTS_PER_MIN",
            default: RateLimitPolicy().requestsPerToken.description))
    var tokenRequests: Int?

    @Option(
        name: .customLong("forwarded-for-hops"),
        help: helpWithEnv(
            "Proxies in front of the gateway that append to X-Forwarded-For (0: the header is ignored and the connection's address counts)",
            env: "RIDE_FORWARDED_FOR_HOPS", default: "0"))
    var forwardedForHops: Int?

    @Option(
        name: .customLong("hypertrack-webhook-secret"),
        help: helpWithEnv(
            "Secret that signs HyperTrack's webhooks (x-hypertrack-signature) to POST /v1/providers/hypertrack/webhook (or a file named by RIDE_HYPERTRACK_WEBHOOK_SECRET_FILE); unset: the endpoint is off",
            env: "RIDE_HYPERTRACK_WEBHOOK_SECRET"))
    var hyperTrackWebhookSecret: String?

    @OptionGroup var identity: IdentityProviderOptions

    @OptionGroup var city: CityOptions

    @OptionGroup public var common: CommonOptions

    @Option(
        name: .customLong("print"),
        help:
            "Print the gateway's API instead of serving it, and exit: openapi (the document /openapi.json serves) or routes (the table of routes in docs/services/gateway.md)."
    )
    var printed: GatewayDocument?

    public init() {}

    public func run() async throws {
        switch printed {
        case .openapi: print(String(decoding: try JSONCoding.encode(try await GatewayAPI.document()), as: UTF8.self))
        case .routes: print(try await GatewayAPI.routeTable())
        case nil: try await runService()
        }
    }

    public static func serve(_ settings: GatewaySettings) async throws {
        try await GatewayServer(settings: settings).run()
    }

    public func settings() throws -> GatewaySettings {
        let logging = try common.logging()
        let listen = try HostPort.parse(
            Setting.resolve(listen, flag: "listen", env: "RIDE_GATEWAY_LISTEN", default: "0.0.0.0:\(PlatformPorts.gateway)"),
            name: "listen address")
        let urlSetting = Setting.resolve(publicURL, flag: "public-url", env: "RIDE_PUBLIC_URL", default: "http://localhost:\(listen.port)")
        guard let url = URL(string: urlSetting.value), url.scheme == "http" || url.scheme == "https", url.host != nil else {
            throw ConfigurationError("public URL (\(urlSetting.origin)) '\(urlSetting.value)' must be an http:// or https:// URL")
        }
        let key = Setting.resolve(publishableKey, flag: "publishable-key", env: "RIDE_PUBLISHABLE_KEY", default: "pk_dev_ridesharing")
        let account = Setting.resolve(accountID, flag: "account-id", env: "RIDE_ACCOUNT_ID", default: "ridesharing")
        let secret = try Setting.resolveSecret(secretKey, flag: "secret-key", env: "RIDE_SECRET_KEY", default: "sk_dev_ridesharing")
        for (setting, name) in [(key, "publishable key"), (account, "account id"), (secret, "secret key")]
        where setting.value.isEmpty || setting.value.contains(":") {
            throw ConfigurationError("\(name) (\(setting.origin)) must be non-empty and without ':'")
        }
        let origins = Setting.resolve(corsOrigins, flag: "cors-origins", env: "RIDE_CORS_ORIGINS", default: "")
        let timeout = try integerSetting(
            requestTimeoutSeconds, flag: "request-timeout-s", env: "RIDE_REQUEST_TIMEOUT_S", default: 30, range: 1...600)
        let recheck = try integerSetting(
            socketRecheckSeconds, flag: "socket-recheck-s", env: "RIDE_SOCKET_RECHECK_S", default: 10, range: 1...3600)
        let sockets = try integerSetting(
            socketsPerUser, flag: "sockets-per-user", env: "RIDE_SOCKETS_PER_USER", default: 10, range: 1...1000)
        let idle = try integerSetting(socketIdleSeconds, flag: "socket-idle-s", env: "RIDE_SOCKET_IDLE_S", default: 900, range: 5...86_400)
        var limits = RateLimitPolicy()
        limits.attemptsPerAddress = RateLimit(
            perMinute: try integerSetting(
                addressAttempts, flag: "address-attempts-per-min", env: "RIDE_ADDRESS_ATTEMPTS_PER_MIN",
                default: limits.attemptsPerAddress.perMinute, range: 1...100_000))
        limits.attemptsPerAccount = RateLimit(
            perMinute: try integerSetting(
                accountAttempts, flag: "account-attempts-per-min", env: "RIDE_ACCOUNT_ATTEMPTS_PER_MIN",
                default: limits.attemptsPerAccount.perMinute, range: 1...100_000))
        limits.invalidTokensPerAddress = RateLimit(
            perMinute: try integerSetting(
                addressInvalidTokens, flag: "address-invalid-tokens-per-min", env: "RIDE_ADDRESS_INVALID_TOKENS_PER_MIN",
                default: limits.invalidTokensPerAddress.perMinute, range: 1...1_000_000))
        limits.shareReadsPerAddress = RateLimit(
            perMinute: try integerSetting(
                addressShareReads, flag: "address-share-reads-per-min", env: "RIDE_ADDRESS_SHARE_READS_PER_MIN",
                default: limits.shareReadsPerAddress.perMinute, range: 1...1_000_000))
        limits.requestsPerToken = RateLimit(
            perMinute: try integerSetting(
                tokenRequests, flag: "token-requests-per-min", env: "RIDE_TOKEN_REQUESTS_PER_MIN",
                default: limits.requestsPerToken.perMinute, range: 1...1_000_000))
        let webhookSecret = try Setting.resolveSecret(
            hyperTrackWebhookSecret, flag: "hypertrack-webhook-secret", env: "RIDE_HYPERTRACK_WEBHOOK_SECRET", default: "")
        let hops = try integerSetting(
            forwardedForHops, flag: "forwarded-for-hops", env: "RIDE_FORWARDED_FOR_HOPS", default: 0, range: 0...10)
        return GatewaySettings(
            pub: try bus.publishEndpoint(), sub: try bus.subscribeEndpoint(), broker: try bus.brokerEndpoint(), listen: listen,
            publicURL: urlSetting.value.hasSuffix("/") ? String(urlSetting.value.dropLast()) : urlSetting.value,
            publishableKey: key.value, accountID: account.value, secretKey: secret.value,
            edge: EdgePolicy(
                corsOrigins: try CORSPolicy.parse(origins), requestTimeout: .seconds(timeout), limits: limits, forwardedForHops: hops,
                socketRecheck: .seconds(recheck), socketsPerUser: sockets, socketIdle: .seconds(idle)),
            http: try common.httpAddress(default: RideProcess.gateway.httpDefault), logFormat: logging.format, logLevel: logging.level,
            identity: try identity.settings(),
            secretKeyOrigin: secret.origin, city: try city.setting(),
            hyperTrackWebhookSecret: webhookSecret.value.isEmpty ? nil : webhookSecret.value,
            hyperTrackWebhookSecretOrigin: webhookSecret.origin)
    }
}

/// `ride-gateway`'s resolved configuration.
public struct GatewaySettings: BusClientSettings {
    public var pub: String
    public var sub: String
    public var broker: String
    public var listen: HostPort
    /// Without a trailing slash.
    public var publicURL: String
    public var publishableKey: String
    public var accountID: String
    public var secretKey: String
    public var edge = EdgePolicy()
    public var http: HostPort
    public var logFormat: LogFormat
    public var logLevel: Logger.Level
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
        """
        ride-gateway configuration OK
          bus                   pub \(pub), sub \(sub), broker \(broker)
          apps                  http://\(listen) (public \(publicURL))
          hypertrack routes     account \(accountID), secret \(String(repeating: "*", count: min(8, secretKey.count))); webhooks \(hyperTrackWebhookSecret == nil ? "off" : "on (POST /v1/providers/hypertrack/webhook)")
          edge                  CORS \(edge.corsOrigins.description), requests time out after \(edge.requestTimeout), sockets' tokens checked every \(edge.socketRecheck), \(edge.socketsPerUser) per user, closed after \(edge.socketIdle) quiet
          limits (per instance) attempts \(edge.limits.attemptsPerAddress) per address, \(edge.limits.attemptsPerAccount) per account; \(edge.limits.requestsPerToken) per user; invalid tokens \(edge.limits.invalidTokensPerAddress) per address; share reads \(edge.limits.shareReadsPerAddress) per address; X-Forwarded-For hops \(edge.forwardedForHops)
          social sign-in        \(identity.summary)
          city                  \(city) (street map, places)
          health/metrics        http://\(http)/health
          logs                  \(logFormat.rawValue), \(logLevel.rawValue)
        """
    }
}

/// What `ride-gateway --print` prints: the API as data, for `ridectl contract` and the docs.
public enum GatewayDocument: String, ExpressibleByArgument, CaseIterable, Sendable {
    case openapi, routes
}
