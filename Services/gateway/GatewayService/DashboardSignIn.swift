import Foundation
import HTTPTypes
import Hummingbird
import Wire

/// The dashboard's sign-in for a browser: `POST /dashboard/session` with the account id and secret
/// key sets a signed session cookie (`OperatorSessions`) and its CSRF token; `DELETE` ends it. The
/// sign-in counts wrong keys as HTTP Basic does (`RateLimits.Failure.wrongOperatorCredentials`), and another
/// site's page can neither sign in nor out (`CrossSiteRequestGuard`).
struct DashboardSignIn {
    let accountID: String
    let secretKey: String
    let sessions: OperatorSessions
    let limits: RateLimits

    func register(on routes: RecordedRoutes) {
        routes.on(
            .get, "dashboard/login",
            RouteDoc(
                "The dashboard's sign-in form (HTML)", tag: .operators,
                replies: [.init(status: 200, description: "an HTML page", content: .html)],
                callsServices: false)
        ) { _, _ in
            DashboardSignInPage.page.response()
        }
        routes.on(
            .post, "dashboard/session",
            RouteDoc(
                "Signs the operator's browser in: a session cookie (HttpOnly, SameSite=Strict, 8 hours) and its CSRF token",
                tag: .operators,
                body: OperatorSignIn.wireSchema.members, reply: OperatorSession.self, "the session's end and CSRF token (also in cookies)",
                errors: [401, 403, 429])
        ) { request, context in
            // A key is checked, not kept: a sign-in sent again is another session, as a second log-in.
            _ = try IdempotencyKey.from(request)
            try limits.admit(before: .wrongOperatorCredentials, request, context)
            let sign: OperatorSignIn
            do {
                sign = try JSONCoding.decode(OperatorSignIn.self, from: Array(try await request.body.collect(upTo: 4096).readableBytesView))
            } catch {
                throw GatewayError(.badRequest, "invalid_body", "the body must be {\"account_id\", \"secret_key\"}")
            }
            guard BasicAuthentication.constantTimeEqual("\(sign.accountID):\(sign.secretKey)", "\(accountID):\(secretKey)") else {
                limits.note(.wrongOperatorCredentials, request, context)
                throw GatewayError(.unauthorized, "unauthorized", "wrong account id or secret key")
            }
            let issued = sessions.issue(now: Date())
            var response = try JSONBody.response(OperatorSession(expiresAt: RFC3339.format(issued.expires), csrfToken: issued.csrf))
            let secure = Self.isHTTPS(request)
            let maxAge = Int(OperatorSessions.lifetime)
            response.setCookie(
                Cookie(
                    name: OperatorSessions.cookie, value: issued.cookie, maxAge: maxAge, path: "/dashboard", secure: secure,
                    sameSite: .strict))
            response.setCookie(
                Cookie(
                    name: OperatorSessions.csrfCookie, value: issued.csrf, maxAge: maxAge, path: "/dashboard", secure: secure,
                    httpOnly: false, sameSite: .strict))
            return response
        }
        routes.on(
            .delete, "dashboard/session",
            RouteDoc(
                "Signs the browser out: both cookies cleared", tag: .operators,
                replies: [.init(status: 204, description: "signed out", content: .noBody)],
                callsServices: false)
        ) { request, _ in
            _ = try IdempotencyKey.from(request)
            var response = Response(status: .noContent)
            for (name, httpOnly) in [(OperatorSessions.cookie, true), (OperatorSessions.csrfCookie, false)] {
                response.setCookie(
                    Cookie(
                        name: name, value: "", maxAge: 0, path: "/dashboard", secure: Self.isHTTPS(request), httpOnly: httpOnly,
                        sameSite: .strict))
            }
            return response
        }
    }

    /// Whether the browser reached the gateway over HTTPS (a TLS-ending proxy says so): its
    /// cookies then go back only over HTTPS. A forged header makes only the sender's cookie stricter.
    static func isHTTPS(_ request: Request) -> Bool {
        request.headers[HTTPField.Name("X-Forwarded-Proto")!]?.lowercased() == "https"
    }
}

/// The operator routes of the dashboard: HTTP Basic (programs, `BasicAuthentication`) or a
/// dashboard session (`OperatorSessions`), whose every change carries the session's CSRF token.
/// A browser without either asking for the page is sent to the sign-in form, unless it asks for
/// HTTP Basic (`/dashboard?auth=basic`: a browser then uses the credentials it was given).
struct OperatorAuthentication: RouterMiddleware {
    typealias Context = GatewayContext
    let basic: BasicAuthentication
    let sessions: OperatorSessions

    static let askBasic = RouteDoc.Parameter(
        name: "auth", schema: .string(), rules: .init(pattern: "^basic$"), required: false,
        description: "basic: without credentials, answer HTTP Basic's challenge instead of sending the browser to the sign-in form")

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        if request.headers[.authorization] != nil { return try await basic.handle(request, context: context, next: next) }
        let toForm = request.method == .get && request.uri.path == "/dashboard" && request.uri.queryParameters.get("auth") != "basic"
        guard let cookie = request.cookies[OperatorSessions.cookie]?.value else {
            if toForm { return Response(status: .seeOther, headers: [.location: "/dashboard/login"]) }
            throw BasicAuthentication.challenge
        }
        guard let nonce = sessions.verify(cookie, now: Date()) else {
            if toForm { return Response(status: .seeOther, headers: [.location: "/dashboard/login"]) }
            throw GatewayError(
                .unauthorized, "session_invalid", "the dashboard session has ended or was not made here; sign in again at /dashboard/login")
        }
        if !CrossSiteRequestGuard<Context>.safeMethods.contains(request.method) {
            guard let token = request.headers[OperatorSessions.csrfHeader],
                BasicAuthentication.constantTimeEqual(token, sessions.csrf(nonce: nonce))
            else {
                throw GatewayError(
                    .forbidden, "csrf_token_invalid",
                    "a change made with a dashboard session carries its token in X-CSRF-Token (the ride_operator_csrf cookie)")
            }
        }
        return try await next(request, context)
    }
}

/// `POST /dashboard/session`'s body.
@WireModel
struct OperatorSignIn: Codable, Sendable {
    @WireField(maxLength: 256)
    var accountID: String
    @WireField(maxLength: 256)
    var secretKey: String
}

/// `POST /dashboard/session`'s reply.
@WireModel
struct OperatorSession: Codable, Sendable {
    /// RFC 3339.
    var expiresAt: String
    /// What changes send in `X-CSRF-Token`.
    var csrfToken: String
}
