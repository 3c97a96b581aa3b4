import HTTPTypes
import Hummingbird

/// Headers a security review expects on every answer: no content-type sniffing, no referrer
/// leaking a share link, and for the pages (HTML) a content security policy — each page brings
/// its own (`HTMLPage`: its inline script and style allowed by their hashes, fetches and
/// WebSockets only to this gateway, no framing, no plug-ins, forms nowhere); any other HTML, such
/// as an error page, gets one that allows nothing.
struct SecurityHeadersMiddleware<Context: RequestContext>: RouterMiddleware {
    static var referrerPolicy: HTTPField.Name { HTTPField.Name("Referrer-Policy")! }
    static var frameOptions: HTTPField.Name { HTTPField.Name("X-Frame-Options")! }

    static var pagePolicy: String { "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'" }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var response = try await next(request, context)
        response.headers[.xContentTypeOptions] = "nosniff"
        response.headers[Self.referrerPolicy] = "no-referrer"
        if response.headers[.contentType]?.hasPrefix("text/html") == true {
            // A page keeps the policy made for it (`HTMLPage`).
            if response.headers[.contentSecurityPolicy] == nil { response.headers[.contentSecurityPolicy] = Self.pagePolicy }
            response.headers[Self.frameOptions] = "DENY"
        }
        return response
    }
}
