import Bus
import Foundation
import Hummingbird
import RideContract
import RideModels
import ServiceKit
import Synchronization

/// Turns `Authorization: Bearer <token>` (or `?access_token=` on a WebSocket upgrade, which
/// browsers cannot give headers) into the user, through `users.authenticate`. Answers are kept
/// for a short while so a busy app does not ask `users` on every request; a token that stops
/// being valid (expired, or its session revoked through another gateway) is refused at most the
/// cache's `ttl` late; a log-out or profile change here forgets the user's tokens at once. Each
/// request with a valid token takes one from its user's bucket (`--token-requests-per-min`, shared
/// by all the user's tokens): 429 `too_many_requests` when it is empty. A token `users` refuses as not its own counts against the
/// client address (`--address-invalid-tokens-per-min`); an address out of that allowance gets 429
/// `too_many_attempts` before `users` is asked about another token.
struct BearerAuthentication: RouterMiddleware {
    typealias Context = GatewayContext
    let platform: PlatformCalls
    let cache: TokenCache
    let limits: RateLimits
    let rejections: RejectionLog

    func handle(_ request: Request, context: GatewayContext, next: (Request, GatewayContext) async throws -> Response) async throws
        -> Response
    {
        var context = context
        context.user = try await authenticate(request, context: context)
        return try await next(request, context)
    }

    /// The user the request's token belongs to; a 401 `GatewayError` when there is none or it is
    /// not valid, its code the users service's reason (`token_expired`, `token_revoked`,
    /// `token_invalid`), a 429 when the token has made too many requests. A refused token is
    /// logged at most once per client address and interval; nothing else is kept of it.
    func authenticate(_ request: Request, context: GatewayContext) async throws -> User {
        let user: User
        do {
            user = try await validate(request, context: context)
        } catch let error as GatewayError where error.code != "unauthorized" {
            let address = ClientAddress.of(request, peer: context.peer, hops: limits.forwardedForHops)
            rejections.note(error.code, from: address, logger: context.logger)
            throw error
        }
        try limits.admitRequest(userID: user.id)
        return user
    }

    private func validate(_ request: Request, context: GatewayContext) async throws -> User {
        guard let token = Self.token(in: request) else {
            throw GatewayError(
                .unauthorized, "unauthorized", "this route needs a bearer token (Authorization: Bearer <token> from POST /v1/sessions)",
                headers: [.wwwAuthenticate: "Bearer"])
        }
        if let user = cache.user(for: token) { return user }
        try limits.admit(before: .invalidToken, request, context)
        do {
            let user = try await platform.call(Ops.Users.authenticate, AuthenticateParams(token: token))
            cache.keep(user, for: token)
            return user
        } catch let error as ServiceError
            where error.status == Status.unauthorized || error.status == Status.unprocessable || error.status == Status.notFound
        {
            let code = error.status == Status.unauthorized && error.code.hasPrefix("token_") ? error.code : "token_invalid"
            if code == "token_invalid" { limits.note(.invalidToken, request, context) }
            throw GatewayError(.unauthorized, code, error.message, headers: [.wwwAuthenticate: "Bearer error=\"invalid_token\""])
        }
    }

    /// The session (`sid`) the request's token names. Read without checking the token: the
    /// middleware has authenticated it before any route runs.
    static func sessionID(in request: Request) -> String? {
        struct Claims: Decodable { var sid: String }
        return token(in: request).flatMap { CompactJWT.part(1, of: $0) }.flatMap { try? JSONDecoder().decode(Claims.self, from: $0).sid }
    }

    static func token(in request: Request) -> String? {
        if let header = request.headers[.authorization] {
            let parts = header.split(separator: " ", maxSplits: 1)
            guard parts.count == 2, parts[0].lowercased() == "bearer" else { return nil }
            let token = parts[1].trimmingCharacters(in: .whitespaces)
            return token.isEmpty ? nil : token
        }
        if let token = request.uri.queryParameters.get("access_token"), !token.isEmpty { return token }
        return nil
    }
}

/// Recently authenticated tokens (bounded; whole-cache reset when full, which only costs lookups).
final class TokenCache: Sendable {
    private struct Entry {
        let user: User
        let until: ContinuousClock.Instant
    }
    private let entries = Mutex<[String: Entry]>([:])
    let ttl: Duration
    let capacity: Int

    init(ttl: Duration = .seconds(30), capacity: Int = 100_000) {
        self.ttl = ttl
        self.capacity = capacity
    }

    func user(for token: String) -> User? {
        entries.withLock { entries in
            guard let entry = entries[token] else { return nil }
            guard entry.until > .now else {
                entries[token] = nil
                return nil
            }
            return entry.user
        }
    }

    func keep(_ user: User, for token: String) {
        entries.withLock { entries in
            if entries.count >= capacity { entries.removeAll(keepingCapacity: true) }
            entries[token] = Entry(user: user, until: .now + ttl)
        }
    }

    /// Forgets every token of `userID` (after a profile change the next request sees the new profile).
    func forget(userID: String) {
        entries.withLock { entries in entries = entries.filter { $0.value.user.id != userID } }
    }
}
