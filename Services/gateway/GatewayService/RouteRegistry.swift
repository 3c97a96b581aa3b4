import HTTPTypes
import Hummingbird
import Synchronization

/// Every route the gateway serves, as "METHOD /path/{param}", recorded as it is registered: the
/// test of `/openapi.json` compares the document with this list, so neither drifts from the other.
final class RouteRegistry: Sendable {
    private let entries = Mutex<[String]>([])

    var routes: [String] { entries.withLock { $0 }.sorted() }

    func record(_ method: HTTPRequest.Method, _ path: String) {
        entries.withLock { $0.append("\(method.rawValue) \(path)") }
    }
}

/// A group of routes under a path prefix whose registrations are recorded.
struct RecordedRoutes {
    let group: RouterGroup<GatewayContext>
    let prefix: String
    let registry: RouteRegistry

    typealias Handler = @Sendable (Request, GatewayContext) async throws -> Response

    /// `path` is relative to the prefix ("" for the prefix itself); parameters as `{name}`.
    func on(_ method: HTTPRequest.Method, _ path: String, _ handler: @escaping Handler) {
        registry.record(method, path.isEmpty ? prefix : "\(prefix)/\(path)")
        group.on(RouterPath(path), method: method, use: handler)
    }
}
