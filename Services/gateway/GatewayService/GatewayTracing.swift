import Bus
import HTTPTypes
import Hummingbird
import Tracing

/// The gateway's part of tracing (docs/tracing.md), added only while tracing is on: each HTTP
/// request is a server span (Hummingbird's `TracingMiddleware`) continuing the caller's
/// `traceparent` when it sent a valid one, and the response says which trace it was.
enum GatewayTracing {
    static func add(to router: Router<GatewayContext>) {
        guard Trace.isEnabled else { return }
        router.add(middleware: TraceHeaderCheckMiddleware())
        router.add(middleware: TracingMiddleware())
        router.add(middleware: TraceparentResponseMiddleware())
    }
}

/// Drops a malformed or oversized `traceparent` (with its `tracestate`) before the tracing
/// middleware reads it: the request starts a new trace instead — never an error.
struct TraceHeaderCheckMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let values = request.headers[values: .traceparent]
        guard !values.isEmpty, values.count > 1 || TraceHeaders(traceparent: values[0]) == nil else {
            return try await next(request, context)
        }
        var head = request.head
        head.headerFields[.traceparent] = nil
        head.headerFields[.tracestate] = nil
        return try await next(Request(head: head, body: request.body), context)
    }
}

/// Sets the response's `traceparent` to the context the request was served in (its server span),
/// so a caller can find the trace. Inside the error middleware's output: error replies have it too.
struct TraceparentResponseMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let trace = Trace.currentHeaders
        var response = try await next(request, context)
        if let trace { response.headers[.traceparent] = trace.traceparent }
        return response
    }
}
