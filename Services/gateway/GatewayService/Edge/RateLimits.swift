import Foundation
import HTTPTypes
import Hummingbird
import Synchronization

/// How many sign-up, log-in and password attempts an address and an account may make, and how
/// many requests a user's bearer tokens may, on one gateway instance (`--address-attempts-per-min`,
/// `--account-attempts-per-min`, `--token-requests-per-min`).
public struct RateLimitPolicy: Sendable, Equatable {
    public var attemptsPerAddress = RateLimit(perMinute: 30)
    public var attemptsPerAccount = RateLimit(perMinute: 10)
    public var requestsPerToken = RateLimit(perMinute: 600)
    /// Bearer tokens `users` refuses as not its own (`token_invalid`: garbage, forged), per client
    /// address; expired and revoked ones are an app's normal traffic and do not count.
    public var invalidTokensPerAddress = RateLimit(perMinute: 60)
    /// Reads of share data (`/v1/shares/…`, `/v1/ride-shares/…`) per client address: a page reads
    /// once a second, so four viewers behind one address; a guesser of share ids gets no further.
    public var shareReadsPerAddress = RateLimit(perMinute: 240)
    /// Asks that make the card provider do something for a user (a payment sheet's ephemeral key,
    /// a payout onboarding link): each costs a call to the provider, so a user gets a few a minute.
    public var providerCallsPerUser = RateLimit(perMinute: 10)

    public init() {}
}

/// The buckets of this instance's requests. Attempts (each costs `users` a 600 000-round PBKDF2)
/// are counted before the op is sent, whatever its outcome, so a burst of them cannot pass while
/// the first are still hashing; a refused attempt reaches no service and stores nothing.
final class RateLimits: Sendable {
    /// The error codes of the 429s.
    enum Code {
        static let tooManyAttempts = "too_many_attempts"
        static let tooManyRequests = "too_many_requests"
    }

    let policy: RateLimitPolicy
    let forwardedForHops: Int
    private let attempts = Mutex(RateLimiter<String>())
    private let requests = Mutex(RateLimiter<String>())
    private let clock: @Sendable () -> ContinuousClock.Instant

    init(policy: RateLimitPolicy, forwardedForHops: Int = 0, clock: @escaping @Sendable () -> ContinuousClock.Instant = { .now }) {
        self.policy = policy
        self.forwardedForHops = forwardedForHops
        self.clock = clock
    }

    /// One sign-up, log-in or password attempt from the request's client address, on `account`
    /// (a phone number, or a user id) when it names one; a 429 when either is out of attempts.
    func admitAttempt(_ request: Request, _ context: GatewayContext, account: String?) throws {
        var keys = [(key: addressKey(request, context), limit: policy.attemptsPerAddress)]
        if let account { keys.append((key: "account " + account, limit: policy.attemptsPerAccount)) }
        try take(attempts, keys, Code.tooManyAttempts) {
            "too many sign-up, log-in or password attempts from this address or on this account; try again in \($0) s"
        }
    }

    private func addressKey(_ request: Request, _ context: GatewayContext) -> String {
        "address " + ClientAddress.of(request, peer: context.peer, hops: forwardedForHops)
    }

    /// One read of share data from the request's client address; a 429 when it is out of reads.
    func admitShareRead(_ request: Request, _ context: GatewayContext) throws {
        try take(requests, [(key: "share reads " + addressKey(request, context), limit: policy.shareReadsPerAddress)], Code.tooManyRequests)
        {
            "too many share reads from this address; try again in \($0) s"
        }
    }

    /// One ask of `userID` that calls the card provider; a 429 when the user is out of them.
    func admitProviderCall(userID: String) throws {
        try take(requests, [(key: "provider " + userID, limit: policy.providerCallsPerUser)], Code.tooManyRequests) {
            "at most \(self.policy.providerCallsPerUser) payment sheets or onboarding links a minute; try again in \($0) s"
        }
    }

    /// Failures a client address may make before it is refused for the rest of the minute, counted
    /// after the fact: `users` refused a token as not its own (garbage, forged), so garbage tokens
    /// cannot make `users` work without end; or an operator's HTTP Basic credentials were wrong, so
    /// the secret key cannot be guessed faster than `--address-attempts-per-min` — the right one
    /// included, until the refill.
    enum Failure {
        case invalidToken, wrongOperatorCredentials

        var name: String { self == .invalidToken ? "invalid tokens" : "wrong operator credentials" }

        func limit(_ policy: RateLimitPolicy) -> RateLimit {
            self == .invalidToken ? policy.invalidTokensPerAddress : policy.attemptsPerAddress
        }
    }

    /// Before what can fail that way is tried: a 429 when the client address has had too many such
    /// failures this minute (`note`).
    func admit(before failure: Failure, _ request: Request, _ context: GatewayContext) throws {
        let keys = failureKeys(failure, request, context)
        let now = clock()
        if let refusal = attempts.withLock({ $0.refusal(keys, at: now) }) {
            throw Self.refusal(
                Code.tooManyAttempts, refusal, "too many \(failure.name) from this address; try again in \(refusal.retryAfterSeconds) s")
        }
    }

    /// One failure of the client address's allowance.
    func note(_ failure: Failure, _ request: Request, _ context: GatewayContext) {
        let keys = failureKeys(failure, request, context)
        let now = clock()
        _ = attempts.withLock { $0.take(keys, at: now) }
    }

    private func failureKeys(_ failure: Failure, _ request: Request, _ context: GatewayContext) -> [(key: String, limit: RateLimit)] {
        [(key: failure.name + " " + addressKey(request, context), limit: failure.limit(policy))]
    }

    /// One request of `userID` (its token already authenticated); a 429 when the user is out of
    /// requests. Every token and session of a user shares one bucket: refreshing, or logging in
    /// again, gets a new token but no more requests.
    func admitRequest(userID: String) throws {
        try take(requests, [(key: "user " + userID, limit: policy.requestsPerToken)], Code.tooManyRequests) {
            "this account made more than \(self.policy.requestsPerToken) requests; try again in \($0) s"
        }
    }

    /// One refresh: refused 429 when the client address has sent too many tokens `users` refused
    /// (`note(.invalidToken, …)`), or the session the refresh token names has refreshed
    /// `--account-attempts-per-min` times this minute (a refresh mints a token pair).
    func admitRefresh(_ request: Request, _ context: GatewayContext, refreshToken: String?) throws {
        try admit(before: .invalidToken, request, context)
        let session = refreshToken.map { String($0.prefix { $0 != "." }.prefix(64)) } ?? ""
        try take(attempts, [(key: "refresh " + session, limit: policy.attemptsPerAccount)], Code.tooManyAttempts) {
            "too many refreshes of this session; try again in \($0) s"
        }
    }

    /// Takes a token from each of `keys` in `table`, or throws the 429 `code` whose message
    /// `message` makes of the seconds to wait.
    private func take(
        _ table: borrowing Mutex<RateLimiter<String>>, _ keys: [(key: String, limit: RateLimit)], _ code: String, _ message: (Int) -> String
    ) throws {
        let now = clock()
        if let refusal = table.withLock({ $0.take(keys, at: now) }) {
            throw Self.refusal(code, refusal, message(refusal.retryAfterSeconds))
        }
    }

    static func refusal(_ code: String, _ refusal: RateLimiter<String>.Refusal, _ message: String) -> GatewayError {
        GatewayError(.tooManyRequests, code, message, headers: [.retryAfter: String(refusal.retryAfterSeconds)])
    }
}

/// Who is asking, as the limits count them: the connection's peer address; with
/// `--forwarded-for-hops N` (gateways reachable only through N proxies that each append to
/// `X-Forwarded-For`), the address the outermost of those proxies saw. Entries a client wrote
/// itself sit left of those and are never taken. An IPv6 address counts as its /64 (one
/// subscriber's network: its hosts pick any of 2^64 addresses), an IPv4-mapped one as the IPv4.
enum ClientAddress {
    static let forwardedFor = HTTPField.Name("X-Forwarded-For")!

    static func of(_ request: Request, peer: String?, hops: Int) -> String {
        let unknown = peer.map(network) ?? "unknown"
        guard hops > 0 else { return unknown }
        let entries = request.headers[values: forwardedFor].flatMap { $0.split(separator: ",") }.map {
            $0.trimmingCharacters(in: .whitespaces)
        }
        // Fewer entries than proxies: the request came round them, so its header is not theirs.
        guard entries.count >= hops else { return unknown }
        let entry = entries[entries.count - hops]
        return entry.isEmpty ? unknown : network(String(entry.prefix(64)))
    }

    /// The network an address counts as: an IPv6 address's /64, written `2001:db8:1:2::/64`;
    /// anything else as it is.
    static func network(_ address: String) -> String {
        var bytes = [UInt8](repeating: 0, count: 16)
        let text = address.hasPrefix("[") && address.hasSuffix("]") ? String(address.dropFirst().dropLast()) : address
        guard text.contains(":"), inet_pton(AF_INET6, text, &bytes) == 1 else { return address }
        if bytes[0..<10].allSatisfy({ $0 == 0 }) && bytes[10] == 0xFF && bytes[11] == 0xFF {
            return bytes[12...].map(String.init).joined(separator: ".")
        }
        let groups = stride(from: 0, to: 8, by: 2).map { String(UInt16(bytes[$0]) << 8 | UInt16(bytes[$0 + 1]), radix: 16) }
        return groups.joined(separator: ":") + "::/64"
    }
}
