import HTTPTypes
import Hummingbird

/// Refuses a state-changing request that a browser sent from another site (cross-site request
/// forgery). The operator routes take HTTP Basic, which a browser resends by itself to any page
/// that posts to the gateway; a browser also says where such a request comes from, in `Origin`
/// and `Sec-Fetch-Site`, and a page cannot forge either. Programs (curl, a HyperTrack client)
/// send neither and pass.
struct CrossSiteRequestGuard<Context: RequestContext>: RouterMiddleware {
    static var safeMethods: Set<HTTPRequest.Method> { [.get, .head, .options] }
    static var secFetchSite: HTTPField.Name { HTTPField.Name("Sec-Fetch-Site")! }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        if !Self.safeMethods.contains(request.method), let reason = Self.crossSite(request.headers, authority: request.head.authority) {
            throw GatewayError(
                .forbidden, "cross_site_request",
                "\(reason): an operator route takes state-changing requests only from the gateway's own pages")
        }
        return try await next(request, context)
    }

    /// Why the request came from another site; nil when it did not (or no browser says).
    static func crossSite(_ headers: HTTPFields, authority: String?) -> String? {
        if let site = headers[secFetchSite], !["same-origin", "none"].contains(site.lowercased()) {
            return "Sec-Fetch-Site is \(site.prefix(32))"
        }
        guard let origin = headers[.origin] else { return nil }
        // `scheme://host[:port]` names this gateway when its host and port are the Host the request
        // was sent to (the scheme is the proxy's business: behind TLS termination it differs).
        let host = origin.split(separator: "://", maxSplits: 1).dropFirst().first.map(String.init)
        guard let host, let authority, host.lowercased() == authority.lowercased() else {
            return "Origin \(origin.prefix(64)) is another site"
        }
        return nil
    }
}
