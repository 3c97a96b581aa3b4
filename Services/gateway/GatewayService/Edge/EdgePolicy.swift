/// What the gateway allows at its edge, beyond authentication: which web origins may call it, how
/// long a request may take, how often it may be asked and whose proxies' `X-Forwarded-For` it
/// believes, how often an open socket's token is checked again, how many sockets a user holds and
/// how long one may stay quiet (`--cors-origins`, `--request-timeout-s`, the limits' flags,
/// `--forwarded-for-hops`, `--socket-recheck-s`, `--sockets-per-user`, `--socket-idle-s`).
public struct EdgePolicy: Sendable, Equatable {
    public var corsOrigins: CORSPolicy = .sameOriginOnly
    public var requestTimeout: Duration = .seconds(30)
    public var limits = RateLimitPolicy()
    /// 0: the connection's peer is the client; N: the Nth `X-Forwarded-For` entry from the right.
    public var forwardedForHops = 0
    /// How often an open WebSocket's token is checked again: a log-out, a new password or the
    /// token's expiry closes the socket within this (plus the token cache's 30 s on another replica).
    public var socketRecheck: Duration = .seconds(10)
    /// WebSockets one user may hold open on this instance.
    public var socketsPerUser = 10
    /// A WebSocket that has sent nothing for this long is closed (4408); the app connects again.
    public var socketIdle: Duration = .seconds(900)
    /// How far back `?after=` may resume an order's live updates, in `orders` events: further
    /// behind, the connection starts with a snapshot instead (a resume cannot make the gateway
    /// read the whole history).
    public static let replayLimit = 1000

    public init(
        corsOrigins: CORSPolicy = .sameOriginOnly, requestTimeout: Duration = .seconds(30), limits: RateLimitPolicy = RateLimitPolicy(),
        forwardedForHops: Int = 0,
        socketRecheck: Duration = .seconds(10), socketsPerUser: Int = 10, socketIdle: Duration = .seconds(900)
    ) {
        self.socketsPerUser = socketsPerUser
        self.socketIdle = socketIdle
        self.corsOrigins = corsOrigins
        self.requestTimeout = requestTimeout
        self.limits = limits
        self.forwardedForHops = forwardedForHops
        self.socketRecheck = socketRecheck
    }
}
