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

    /// The methods each recorded path answers.
    var methodsByPath: [String: Set<String>] {
        var methods: [String: Set<String>] = [:]
        for route in routes {
            let parts = route.split(separator: " ", maxSplits: 1).map(String.init)
            methods[parts[1], default: []].insert(parts[0])
        }
        return methods
    }
}

extension Router where Context == GatewayContext {
    /// A path the gateway serves asked with a method it does not answer: 405 with `Allow`, not 404.
    func refuseOtherMethods(of methodsByPath: [String: Set<String>]) {
        let all: [HTTPRequest.Method] = [.get, .post, .put, .patch, .delete]
        for (path, methods) in methodsByPath {
            let allowed = methods.sorted().joined(separator: ", ")
            for method in all where !methods.contains(method.rawValue) {
                on(RouterPath(path), method: method) { _, _ -> Response in
                    throw GatewayError(.methodNotAllowed, "method_not_allowed", "\(path) answers \(allowed)", headers: [.allow: allowed])
                }
            }
        }
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
