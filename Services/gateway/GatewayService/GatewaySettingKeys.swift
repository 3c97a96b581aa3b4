import Bus
import SettingsKit

/// `ride-gateway`'s own settings, each declared once: the flags and the values come from here.
enum GatewaySettingKeys {
    static let listen = SettingKey(
        "listen", env: "RIDE_GATEWAY_LISTEN", default: "0.0.0.0:\(PlatformPorts.gateway)", "Address of the apps' HTTP listener (HOST:PORT)")
    static let publicURL = SettingKey(
        "public-url", env: "RIDE_PUBLIC_URL", default: "http://localhost:<listen port>",
        "The gateway's address as apps and browsers reach it, for share links")
    static let publishableKey = SettingKey(
        "publishable-key", env: "RIDE_PUBLISHABLE_KEY", default: "pk_dev_ridesharing",
        "Publishable key the gateway forwards location batches with")
    static let accountID = SettingKey(
        "account-id", env: "RIDE_ACCOUNT_ID", default: "ridesharing", "HTTP Basic user of the HyperTrack-compatible routes")
    static let secretKey = SettingKey(
        "secret-key", env: "RIDE_SECRET_KEY", default: "sk_dev_ridesharing",
        "HTTP Basic password of the HyperTrack-compatible routes and the dashboard's API (or a file named by RIDE_SECRET_KEY_FILE)")
    static let corsOrigins = SettingKey(
        "cors-origins", env: "RIDE_CORS_ORIGINS", default: "none: same origin only",
        "Origins whose web pages may call the API and read the share data (comma-separated, e.g. https://app.example.com; * for any)")
    static let socketRecheckSeconds = IntegerSettingKey(
        "socket-recheck-s", env: "RIDE_SOCKET_RECHECK_S", default: 10, range: 1...3600,
        "Seconds between checks of an open WebSocket's token: a logged-out, changed-password or expired one closes the socket (4401)")
    static let socketsPerUser = IntegerSettingKey(
        "sockets-per-user", env: "RIDE_SOCKETS_PER_USER", default: 10, range: 1...1000,
        "WebSockets one user may hold open on this instance; one more is refused (4429)")
    static let socketIdleSeconds = IntegerSettingKey(
        "socket-idle-s", env: "RIDE_SOCKET_IDLE_S", default: 900, range: 5...86_400,
        "Seconds a WebSocket may send nothing before it is closed (4408; apps connect again)")
    static let requestTimeoutSeconds = IntegerSettingKey(
        "request-timeout-s", env: "RIDE_REQUEST_TIMEOUT_S", default: 30, range: 1...600,
        "Seconds a request may take before it is answered 504 request_timeout (not the WebSockets)")
    static let addressAttempts = IntegerSettingKey(
        "address-attempts-per-min", env: "RIDE_ADDRESS_ATTEMPTS_PER_MIN", default: RateLimitPolicy().attemptsPerAddress.perMinute,
        range: 1...100_000,
        "Sign-up, log-in and password attempts a client address may make per minute on this instance (see docs/services/gateway.md)")
    static let addressInvalidTokens = IntegerSettingKey(
        "address-invalid-tokens-per-min", env: "RIDE_ADDRESS_INVALID_TOKENS_PER_MIN",
        default: RateLimitPolicy().invalidTokensPerAddress.perMinute, range: 1...1_000_000,
        "Bearer tokens that are not the platform's (garbage, forged) a client address may send per minute on this instance before 429")
    static let addressShareReads = IntegerSettingKey(
        "address-share-reads-per-min", env: "RIDE_ADDRESS_SHARE_READS_PER_MIN", default: RateLimitPolicy().shareReadsPerAddress.perMinute,
        range: 1...1_000_000,
        "Reads of share data (/v1/shares/…, /v1/ride-shares/…) a client address may make per minute on this instance (a share page reads once a second)"
    )
    static let accountAttempts = IntegerSettingKey(
        "account-attempts-per-min", env: "RIDE_ACCOUNT_ATTEMPTS_PER_MIN", default: RateLimitPolicy().attemptsPerAccount.perMinute,
        range: 1...100_000, "Sign-up, log-in and password attempts on one account (a phone number, a user) per minute on this instance")
    static let tokenRequests = IntegerSettingKey(
        "token-requests-per-min", env: "RIDE_TOKEN_REQUESTS_PER_MIN", default: RateLimitPolicy().requestsPerToken.perMinute,
        range: 1...1_000_000, "Requests one user may make per minute on this instance, all their tokens together")
    static let forwardedForHops = IntegerSettingKey(
        "forwarded-for-hops", env: "RIDE_FORWARDED_FOR_HOPS", default: 0, range: 0...10,
        "Proxies in front of the gateway that append to X-Forwarded-For (0: the header is ignored and the connection's address counts)")
    static let hyperTrackWebhookSecret = SettingKey(
        "hypertrack-webhook-secret", env: "RIDE_HYPERTRACK_WEBHOOK_SECRET",
        "Secret that signs HyperTrack's webhooks (x-hypertrack-signature) to POST /v1/providers/hypertrack/webhook (or a file named by RIDE_HYPERTRACK_WEBHOOK_SECRET_FILE); unset: the endpoint is off"
    )
}
