import Hummingbird

/// A request the gateway has not answered within `timeout` (its calls to the services, all of
/// them) is answered `504 request_timeout` and its work cancelled, so a slow path cannot hold a
/// connection and its memory without end. The WebSocket routes have their own router.
struct RequestTimeoutMiddleware<Context: RequestContext>: RouterMiddleware {
    let timeout: Duration

    /// `next`, carried into the child task that runs it. Safe to send: the task group's scope ends
    /// before `handle` returns, so the closure never outlives the call it was given for, and only
    /// that one child task calls it, once, while this task waits — never from two threads at once.
    private struct Next: @unchecked Sendable {
        let run: (Request, Context) async throws -> Response
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let timeout = self.timeout
        return try await withoutActuallyEscaping(next) { next in
            let handler = Next(run: next)
            return try await withThrowingTaskGroup(of: Response?.self) { group in
                group.addTask { try await handler.run(request, context) }
                group.addTask {
                    try await Task.sleep(for: timeout)
                    return nil
                }
                defer { group.cancelAll() }
                guard let first = try await group.next(), let response = first else {
                    throw GatewayError(
                        .gatewayTimeout, "request_timeout", "the request took longer than \(timeout) (--request-timeout-s); try again")
                }
                return response
            }
        }
    }
}
