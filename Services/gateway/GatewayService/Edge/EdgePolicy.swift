/// What the gateway allows at its edge, beyond authentication: which web origins may call it, how
/// long a request may take, how often it may be asked and whose proxies' `X-Forwarded-For` it
/// believes (`--cors-origins`, `--request-timeout-s`, the limits' flags, `--forwarded-for-hops`).
public struct EdgePolicy: Sendable, Equatable {
    public var corsOrigins: CORSPolicy = .sameOriginOnly
    public var requestTimeout: Duration = .seconds(30)
    public var limits = RateLimitPolicy()
    /// 0: the connection's peer is the client; N: the Nth `X-Forwarded-For` entry from the right.
    public var forwardedForHops = 0

    public init(corsOrigins: CORSPolicy = .sameOriginOnly, requestTimeout: Duration = .seconds(30), limits: RateLimitPolicy = RateLimitPolicy(), forwardedForHops: Int = 0) {
        self.corsOrigins = corsOrigins
        self.requestTimeout = requestTimeout
        self.limits = limits
        self.forwardedForHops = forwardedForHops
    }
}
