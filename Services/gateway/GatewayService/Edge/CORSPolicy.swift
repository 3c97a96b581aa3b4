import Foundation
import HTTPTypes
import Hummingbird
import ServiceKit
import SettingsKit

/// Which web origins may read the gateway's answers from their pages (the Fetch standard's CORS).
/// Same origin only by default: the share pages and the dashboard are served by the gateway itself.
/// Tokens travel in the Authorization header, never in cookies, so no credentials are allowed.
public enum CORSPolicy: Sendable, Equatable, CustomStringConvertible {
    case sameOriginOnly
    case anyOrigin
    case origins(Set<String>)

    /// `--cors-origins`: empty (none), `*`, or `scheme://host[:port]` origins, comma-separated.
    public static func parse(_ setting: Setting) throws -> CORSPolicy {
        let entries = setting.value.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        if entries.isEmpty { return .sameOriginOnly }
        if entries == ["*"] { return .anyOrigin }
        for entry in entries {
            guard let url = URL(string: entry), url.scheme == "http" || url.scheme == "https", url.host != nil, url.path.isEmpty,
                url.query == nil
            else {
                throw ConfigurationError(
                    "CORS origins (\(setting.origin)): '\(entry)' is not an origin like https://app.example.com (or * alone)")
            }
        }
        return .origins(Set(entries))
    }

    /// The value of Access-Control-Allow-Origin for a request from `origin`, nil when not allowed.
    public func allowed(_ origin: String) -> String? {
        switch self {
        case .sameOriginOnly: nil
        case .anyOrigin: "*"
        case .origins(let origins): origins.contains(origin) ? origin : nil
        }
    }

    public var description: String {
        switch self {
        case .sameOriginOnly: "same origin only"
        case .anyOrigin: "any origin"
        case .origins(let origins): origins.sorted().joined(separator: ", ")
        }
    }
}

/// Answers preflights (`OPTIONS` with Access-Control-Request-Method) and marks the answers to
/// allowed origins; a request from another origin is served as before, without the headers, so
/// its page cannot read the answer.
struct CORSMiddleware<Context: RequestContext>: RouterMiddleware {
    let policy: CORSPolicy
    static var allowedHeaders: String { "authorization, content-type, idempotency-key, traceparent, tracestate" }
    static var allowedMethods: String { "GET, POST, PUT, PATCH, DELETE" }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard let origin = request.headers[.origin], let allowed = policy.allowed(origin) else { return try await next(request, context) }
        if request.method == .options, request.headers[.accessControlRequestMethod] != nil {
            var headers = HTTPFields()
            headers[.accessControlAllowOrigin] = allowed
            headers[.accessControlAllowMethods] = Self.allowedMethods
            headers[.accessControlAllowHeaders] = Self.allowedHeaders
            headers[.accessControlMaxAge] = "600"
            if allowed != "*" { headers[.vary] = "Origin" }
            return Response(status: .noContent, headers: headers)
        }
        var response = try await next(request, context)
        response.headers[.accessControlAllowOrigin] = allowed
        response.headers[.accessControlExposeHeaders] = "traceparent, retry-after"
        if allowed != "*" { response.headers[.vary] = "Origin" }
        return response
    }
}
