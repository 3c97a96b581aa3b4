import HTTPTypes
import Hummingbird
import Synchronization

/// Every route the gateway serves, recorded as it is registered with what the API document says
/// of it: `/openapi.json` is built from these entries, and 405 answers come from their methods.
final class RouteRegistry: Sendable {
    struct Entry: Sendable {
        var method: HTTPRequest.Method
        /// With parameters as `{name}`.
        var path: String
        var security: RouteSecurity
        var doc: RouteDoc
    }

    private let entries = Mutex<[Entry]>([])

    var all: [Entry] { entries.withLock { $0 }.sorted { ($0.path, $0.method.rawValue) < ($1.path, $1.method.rawValue) } }

    /// "METHOD /path", sorted.
    var routes: [String] { all.map { "\($0.method.rawValue) \($0.path)" } }

    func record(_ entry: Entry) {
        entries.withLock { $0.append(entry) }
    }

    /// The methods of the routes whose path (`/v1/orders/{id}`) matches `path` (`/v1/orders/o-1`)
    /// best: as the router prefers them, a path with more fixed segments (`/trips`) over one with
    /// parameters (`/{share_id}`).
    func methods(servingPath path: String) -> Set<String> {
        let segments = path.split(separator: "/", omittingEmptySubsequences: false).dropFirst()
        var best: (fixed: Int, methods: Set<String>) = (-1, [])
        for entry in all {
            let pattern = entry.path.split(separator: "/", omittingEmptySubsequences: false).dropFirst()
            guard pattern.count == segments.count,
                zip(pattern, segments).allSatisfy({ pattern, segment in pattern.hasPrefix("{") ? !segment.isEmpty : pattern == segment })
            else { continue }
            let fixed = pattern.filter { !$0.hasPrefix("{") }.count
            if fixed > best.fixed { best = (fixed, []) }
            if fixed == best.fixed { best.methods.insert(entry.method.rawValue) }
        }
        return best.methods
    }
}

/// Who may call a group of routes.
enum RouteSecurity: String, Sendable {
    case none
    /// `Authorization: Bearer <token>` from `POST /v1/sessions`.
    case bearer
    /// HTTP Basic with the account id and secret key.
    case basic
    /// HTTP Basic, or the dashboard's session cookie (`POST /dashboard/session`) with its CSRF token.
    case `operator`
}

/// A path the gateway serves asked with a method it does not answer — any method, even one HTTP
/// does not name: 405 with `Allow`, not the router's 404.
struct MethodNotAllowedMiddleware: RouterMiddleware {
    typealias Context = GatewayContext
    let registry: RouteRegistry

    func handle(_ request: Request, context: GatewayContext, next: (Request, GatewayContext) async throws -> Response) async throws
        -> Response
    {
        do {
            return try await next(request, context)
        } catch let error as HTTPError where error.status == .notFound {
            let methods = registry.methods(servingPath: request.uri.path)
            guard !methods.isEmpty, !methods.contains(request.method.rawValue) else { throw error }
            let allowed = methods.sorted().joined(separator: ", ")
            throw GatewayError(
                .methodNotAllowed, "method_not_allowed", "\(request.uri.path.prefix(200)) answers \(allowed)", headers: [.allow: allowed])
        }
    }
}

/// A group of routes under a path prefix whose registrations are recorded.
struct RecordedRoutes {
    let group: RouterGroup<GatewayContext>
    let prefix: String
    let security: RouteSecurity
    let registry: RouteRegistry

    typealias Handler = @Sendable (Request, GatewayContext) async throws -> Response

    /// `path` is relative to the prefix ("" for the prefix itself); parameters as `{name}`.
    /// Every POST, PUT, PATCH and DELETE takes an `Idempotency-Key`: its handler passes it on
    /// (`IdempotencyKey.stamp`), which `IdempotencyIntegrationTests` holds every such route to.
    func on(_ method: HTTPRequest.Method, _ path: String, _ doc: RouteDoc, _ handler: @escaping Handler) {
        var doc = doc
        doc.idempotent = IdempotencyKey.methods.contains(method)
        record(method, path, doc)
        group.on(RouterPath(path), method: method, use: handler)
    }

    /// Records a route registered some other way (a WebSocket).
    func record(_ method: HTTPRequest.Method, _ path: String, _ doc: RouteDoc) {
        registry.record(.init(method: method, path: path.isEmpty ? prefix : "\(prefix)/\(path)", security: security, doc: doc))
    }
}
