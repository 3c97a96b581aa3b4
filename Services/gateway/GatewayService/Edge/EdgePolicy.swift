/// What the gateway allows at its edge, beyond authentication: which web origins may call it,
/// and how long a request may take (`--cors-origins`, `--request-timeout-s`).
public struct EdgePolicy: Sendable, Equatable {
    public var corsOrigins: CORSPolicy = .sameOriginOnly
    public var requestTimeout: Duration = .seconds(30)

    public init(corsOrigins: CORSPolicy = .sameOriginOnly, requestTimeout: Duration = .seconds(30)) {
        self.corsOrigins = corsOrigins
        self.requestTimeout = requestTimeout
    }
}
