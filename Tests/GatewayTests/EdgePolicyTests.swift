import Bus
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import ServiceKit
import Testing
import Wire

@testable import GatewayService

/// The gateway's edge: security headers on every answer and a content security policy on the
/// pages, CORS for the origins configured (and none by default), and the request timeout.
@Suite struct EdgePolicyTests {
    static func application(
        _ arguments: [String], callTimeout: Duration = .milliseconds(200),
        clock: @escaping @Sendable () -> ContinuousClock.Instant = { .now }
    ) async throws -> (
        Application<RouterResponder<GatewayContext>>, @Sendable () async -> Void
    ) {
        var options = MDPClient.Options()
        options.timeout = callTimeout
        options.attempts = 1
        let (gateway, close) = try await GatewayAPI.offline(options, arguments: arguments, clock: clock)
        return (
            Application(
                router: gateway.router(), configuration: .init(address: .hostname("127.0.0.1", port: 0)), logger: Logger(label: "test")),
            close
        )
    }

    static let operatorAuth = "Basic " + Data("ridesharing:sk_dev_ridesharing".utf8).base64EncodedString()

    @Test func everyAnswerCarriesTheSecurityHeadersAndPagesAPolicy() async throws {
        let (app, close) = try await Self.application([])
        try await app.test(.router) { client in
            try await client.execute(uri: "/dashboard", method: .get, headers: [.authorization: Self.operatorAuth]) { response in
                #expect(response.status == .ok && response.headers[.contentType]?.hasPrefix("text/html") == true)
                let policy = response.headers[.contentSecurityPolicy] ?? ""
                for directive in ["default-src 'none'", "connect-src 'self'", "frame-ancestors 'none'", "form-action 'none'"] {
                    #expect(policy.contains(directive), "\(directive) in \(policy)")
                }
                #expect(response.headers[HTTPField.Name("X-Frame-Options")!] == "DENY")
                #expect(response.headers[.xContentTypeOptions] == "nosniff")
                #expect(response.headers[HTTPField.Name("Referrer-Policy")!] == "no-referrer")
            }
            // Every page's policy allows its own inline script and style by their hashes, and
            // nothing else inline (no 'unsafe-inline'); the web apps load theirs from the gateway.
            for page in ["/dashboard/login", "/abcdefg", "/ride/abcdefghijkmnpqrstuv", "/app/rider", "/app/driver"] {
                try await client.execute(uri: page, method: .get) { response in
                    #expect(response.status == .ok, "\(page)")
                    let policy = response.headers[.contentSecurityPolicy] ?? ""
                    let html = String(buffer: response.body)
                    #expect(!policy.contains("unsafe-inline") && policy.contains("frame-ancestors 'none'"), "\(page): \(policy)")
                    for tag in ["script", "style"] {
                        for hash in HTMLPage.hashes(of: tag, in: html) {
                            #expect(policy.contains("\(tag)-src") && policy.contains(hash), "\(page): \(tag) \(hash)")
                        }
                    }
                    #expect(
                        page.hasPrefix("/app/") ? policy.contains("script-src 'self'") : policy.contains("'sha256-"), "\(page): \(policy)")
                }
            }
            #expect(HTMLPage.hashes(of: "script", in: "<script>a</script><script src=x></script><script>b</script>").count == 2)
            #expect(HTMLPage("<p>no script</p>").policy.contains("script-src 'none'"))
            try await client.execute(uri: "/v1/nothing", method: .get) { response in
                #expect(response.status == .notFound)
                #expect(response.headers[.xContentTypeOptions] == "nosniff", "errors too")
                #expect(response.headers[.contentSecurityPolicy] == nil, "JSON is not a page")
            }
        }
        await close()
    }

    @Test func noOriginMayReadTheAnswersUnlessConfigured() async throws {
        let (app, close) = try await Self.application([])
        try await app.test(.router) { client in
            try await client.execute(uri: "/openapi.json", method: .get, headers: [.origin: "https://evil.example"]) { response in
                #expect(response.status == .ok && response.headers[.accessControlAllowOrigin] == nil)
            }
        }
        await close()
    }

    @Test func aConfiguredOriginIsAllowedAndPreflightsAreAnswered() async throws {
        let (app, close) = try await Self.application(["--cors-origins", "https://app.example.com, https://ops.example.com:8443"])
        try await app.test(.router) { client in
            try await client.execute(
                uri: "/v1/orders", method: .options,
                headers: [
                    .origin: "https://app.example.com", .accessControlRequestMethod: "POST",
                    .accessControlRequestHeaders: "authorization, content-type",
                ]
            ) { response in
                #expect(response.status == .noContent)
                #expect(response.headers[.accessControlAllowOrigin] == "https://app.example.com")
                #expect(response.headers[.accessControlAllowMethods]?.contains("POST") == true)
                #expect(response.headers[.accessControlAllowHeaders]?.contains("authorization") == true)
                #expect(response.headers[.vary] == "Origin")
            }
            try await client.execute(uri: "/openapi.json", method: .get, headers: [.origin: "https://ops.example.com:8443"]) { response in
                #expect(response.headers[.accessControlAllowOrigin] == "https://ops.example.com:8443")
                #expect(response.headers[.accessControlAllowCredentials] == nil, "tokens travel in a header, never cookies")
            }
            try await client.execute(uri: "/openapi.json", method: .get, headers: [.origin: "https://evil.example"]) { response in
                #expect(response.status == .ok && response.headers[.accessControlAllowOrigin] == nil, "an origin not listed cannot read it")
            }
        }
        await close()
    }

    /// What the command line's check says of `arguments` (empty when they are accepted).
    static func refusal(_ arguments: [String]) -> String {
        do {
            _ = try RideGatewayCommand.parse(arguments).settings()
            return ""
        } catch {
            return "\(error)"
        }
    }

    @Test func malformedOriginsAndTimeoutsAreRefusedNamingTheSetting() throws {
        #expect(
            Self.refusal(["--cors-origins", "app.example.com"]).contains(
                "CORS origins (--cors-origins): 'app.example.com' is not an origin"))
        #expect(Self.refusal(["--cors-origins", "https://a.example/path"]).contains("'https://a.example/path' is not an origin"))
        #expect(Self.refusal(["--request-timeout-s", "0"]).contains("--request-timeout-s"))
        #expect(Self.refusal(["--cors-origins", "*"]).isEmpty)
        #expect(try RideGatewayCommand.parse(["--cors-origins", "*"]).settings().edge.corsOrigins == .anyOrigin)
    }

    @Test func aBodyOverOneMebibyteIsRefused413() async throws {
        let (app, close) = try await Self.application([])
        try await app.test(.router) { client in
            let body = ByteBuffer(repeating: UInt8(ascii: " "), count: (1 << 20) + 1)
            try await client.execute(uri: "/v1/users", method: .post, headers: [.contentType: "application/json"], body: body) { response in
                #expect(response.status == .contentTooLarge)
                let error = try JSONCoding.decode(JSONValue.self, from: Array(response.body.readableBytesView))
                #expect(error["error"]?["code"] == "too_large", "\(error)")
            }
        }
        await close()
    }

    @Test func aRequestSlowerThanTheTimeoutIsAnswered504() async throws {
        // Calls to the services wait 300 s (nobody answers); the request may take 1 s.
        let (app, close) = try await Self.application(["--request-timeout-s", "1"], callTimeout: .seconds(300))
        let started = ContinuousClock.now
        try await app.test(.router) { client in
            let body = #"{"role":"rider","name":"Ann","phone_number":"+380501234567","password":"secret123"}"#
            try await client.execute(
                uri: "/v1/users", method: .post, headers: [.contentType: "application/json"], body: ByteBuffer(string: body)
            ) { response in
                #expect(response.status == .gatewayTimeout)
                let error = try JSONCoding.decode(JSONValue.self, from: Array(response.body.readableBytesView))
                #expect(error["error"]?["code"] == "request_timeout", "\(error)")
            }
        }
        #expect(
            ContinuousClock.now - started < .seconds(120), "the request timeout (1 s), not the call's 300 s (room for a loaded machine)")
        await close()
    }
}

/// What `CrossSiteRequestGuard` takes for another site's request: what a browser says, read strictly.
@Suite struct CrossSiteRequestGuardTests {
    func reason(_ fields: [(String, String)], authority: String? = "gw.example:8080") -> String? {
        var headers = HTTPFields()
        for (name, value) in fields { headers[HTTPField.Name(name)!] = value }
        return CrossSiteRequestGuard<GatewayContext>.crossSite(headers, authority: authority)
    }

    @Test func theGatewaysOwnPagesAndProgramsPass() {
        #expect(reason([]) == nil, "a program sends neither header")
        #expect(reason([("Origin", "http://gw.example:8080")]) == nil)
        #expect(
            reason([("Origin", "https://GW.example:8080"), ("Sec-Fetch-Site", "same-origin")]) == nil,
            "the scheme is the proxy's; hosts ignore case")
        #expect(reason([("Sec-Fetch-Site", "none")]) == nil, "typed into the address bar")
    }

    @Test func anotherSitesRequestsAreNamed() {
        #expect(reason([("Origin", "http://evil.example")])?.contains("another site") == true)
        #expect(reason([("Origin", "null")]) != nil)
        #expect(reason([("Origin", "http://gw.example:8081")]) != nil, "another port is another origin")
        #expect(reason([("Origin", "http://gw.example:8080.evil.example")]) != nil)
        #expect(reason([("Origin", "http://gw.example:8080")], authority: nil) != nil, "no Host to match")
        #expect(reason([("Sec-Fetch-Site", "cross-site")])?.hasPrefix("Sec-Fetch-Site") == true)
        #expect(
            reason([("Sec-Fetch-Site", "same-site"), ("Origin", "http://gw.example:8080")]) != nil,
            "a sibling subdomain is another site's page")
    }
}
