/// What the gateway allows at its edge, beyond authentication: which web origins may call it, how
/// long a request may take, how often it may be asked and whose proxies' `X-Forwarded-For` it
/// believes, how often an open socket's token is checked again (`--cors-origins`,
/// `--request-timeout-s`, the limits' flags, `--forwarded-for-hops`, `--socket-recheck-s`).
public struct EdgePolicy: Sendable, Equatable {
    public var corsOrigins: CORSPolicy = .sameOriginOnly
    public var requestTimeout: Duration = .seconds(30)
    public var limits = RateLimitPolicy()
    /// 0: the connection's peer is the client; N: the Nth `X-Forwarded-For` entry from the right.
    public var forwardedForHops = 0
    /// How often an open WebSocket's token is checked again: a log-out, a new password or the
    /// token's expiry closes the socket within this (plus the token cache's 30 s on another replica).
    public var socketRecheck: Duration = .seconds(10)

    public init(
        corsOrigins: CORSPolicy = .sameOriginOnly, requestTimeout: Duration = .seconds(30), limits: RateLimitPolicy = RateLimitPolicy(), forwardedForHops: Int = 0,
        socketRecheck: Duration = .seconds(10)
    ) {
        self.corsOrigins = corsOrigins
        self.requestTimeout = requestTimeout
        self.limits = limits
        self.forwardedForHops = forwardedForHops
        self.socketRecheck = socketRecheck
    }
}
