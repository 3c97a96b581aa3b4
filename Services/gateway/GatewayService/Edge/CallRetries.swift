import Hummingbird

/// Whether the ops a request becomes may be sent again when no reply comes in time (the MDP
/// client's attempts): an op whose reply was lost may have run, and sent again it runs again. So
/// only a request that is safe to repeat is retried: a GET (HTTP's safe methods), or a request
/// with an `Idempotency-Key`, which the service answers once (`RequestLog`). Any other POST,
/// PUT, PATCH or DELETE — a chat message, a report, a log-in and its PBKDF2 — is sent once; if its
/// reply is lost the app is told (504/503) and decides, as HTTP lets it for such a request.
enum CallRetries {
    @TaskLocal static var allowed = true

    /// Whether `request`'s ops may be sent again.
    static func allowed(for request: Request) -> Bool {
        !IdempotencyKey.methods.contains(request.method) || request.headers[IdempotencyKey.name] != nil
    }

    /// The attempts to give the MDP client: its own when retries are allowed, else one.
    static var attempts: Int? { allowed ? nil : 1 }
}

/// Sets `CallRetries.allowed` for everything a request does.
struct CallRetriesMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        try await CallRetries.$allowed.withValue(CallRetries.allowed(for: request)) { try await next(request, context) }
    }
}
