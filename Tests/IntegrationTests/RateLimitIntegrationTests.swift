import Foundation
import PlatformLauncher
import Testing
import Wire

/// The gateway's limits through real processes (`ride-users` and `ride-gateway` on a test bus):
/// wrong passwords run an account and an address out of attempts (429 with Retry-After) while
/// other accounts and addresses go on, a token out of requests is refused, refused tokens run an
/// address out of attempts too, and a refused request stores nothing. Addresses are `X-Forwarded-For` entries (`--forwarded-for-hops 1`). The limits
/// refill over a minute: each check allows for refills on a slow machine, never for less.
@Suite(.serialized) struct RateLimitIntegrationTests {
    static let limits = [
        "--account-attempts-per-min", "4", "--address-attempts-per-min", "8", "--token-requests-per-min", "5",
        "--address-invalid-tokens-per-min", "8",
        "--forwarded-for-hops", "1",
    ]

    @Test func wrongPasswordsAndBusyTokensAre429AndOthersGoOn() async throws {
        try await withTestBus("rate-limits") { bus in
            _ = try await TestService.users(on: bus)
            try await LimitedGateway(gateway: try await TestGateway.start(on: bus, arguments: Self.limits)).check()
        }
    }
}

/// Requests from chosen addresses to a gateway started with `RateLimitIntegrationTests.limits`.
struct LimitedGateway {
    struct Answer {
        let status: Int
        let code: String?
        let retryAfter: Int?
        let body: JSONValue
    }

    let gateway: TestGateway

    func send(_ method: String, _ path: String, from address: String, token: String? = nil, _ json: String? = nil) async throws -> Answer {
        var headers = ["X-Forwarded-For": address]
        if let token { headers["Authorization"] = "Bearer \(token)" }
        if json != nil { headers["Content-Type"] = "application/json" }
        let response = try await HTTPProbe.send(
            method, gateway.base + path, headers: headers, body: json.map { Array($0.utf8) }, timeout: .seconds(30))
        let body = (try? JSONCoding.decode(JSONValue.self, from: Array(response.body))) ?? .null
        return Answer(
            status: response.status, code: body["error"]?["code"]?.stringValue,
            retryAfter: response.headers["retry-after"].flatMap { Int($0) }, body: body)
    }

    func logIn(_ phone: String, _ password: String, from address: String) async throws -> Answer {
        try await send("POST", "/v1/sessions", from: address, #"{"phone_number":"\#(phone)","password":"\#(password)"}"#)
    }

    func signUp(_ name: String, _ phone: String, from address: String) async throws -> Answer {
        try await send(
            "POST", "/v1/users", from: address, #"{"role":"rider","name":"\#(name)","phone_number":"\#(phone)","password":"secret123"}"#)
    }

    /// Sends `attempt` until it is refused 429 (at most `bound` times); the answers before and the refusal.
    func untilRefused(bound: Int, _ attempt: () async throws -> Answer) async throws -> (before: [Answer], refusal: Answer?) {
        var before: [Answer] = []
        for _ in 0..<bound {
            let answer = try await attempt()
            if answer.status == 429 { return (before, answer) }
            before.append(answer)
        }
        return (before, nil)
    }

    func check() async throws {
        #expect(try await signUp("Ann", "+380501230001", from: "198.51.100.1").status == 201)
        #expect(try await signUp("Bob", "+380501230002", from: "198.51.100.2").status == 201)

        // Ann's account: wrong passwords from one address until refused. Her sign-up took one of
        // her 4 attempts, so 3 are left, or a few more if the minute refilled some meanwhile.
        let guessing = try await untilRefused(bound: 12) { try await logIn("+380501230001", "wrong-guess", from: "203.0.113.7") }
        #expect(guessing.before.allSatisfy { $0.status == 401 && $0.code == "invalid_credentials" }, "\(guessing.before.map(\.body))")
        #expect((3...8).contains(guessing.before.count), "\(guessing.before.count) wrong passwords before the 429")
        let refusal = try #require(guessing.refusal, "no 429 after 12 wrong passwords")
        #expect(
            refusal.code == "too_many_attempts" && (1...60).contains(refusal.retryAfter ?? 0),
            "\(refusal.body), Retry-After \(String(describing: refusal.retryAfter))")
        // The account is refused from another address too, even with the right password (until
        // Retry-After: a slow machine may answer later than that, and then the log-in passes).
        let refused = ContinuousClock.now
        let rightPassword = try await logIn("+380501230001", "secret123", from: "192.0.2.44")
        if ContinuousClock.now - refused < .seconds((refusal.retryAfter ?? 1) - 1) {
            #expect(rightPassword.status == 429 && rightPassword.code == "too_many_attempts", "\(rightPassword.body)")
        }
        // …while another account goes on from the guessing address.
        let bob = try await logIn("+380501230002", "secret123", from: "203.0.113.7")
        #expect(bob.status == 200, "\(bob.body)")
        let token = try #require(bob.body["token"]?.stringValue)

        // One address trying many accounts runs out of its 8 attempts; another address does not.
        let spraying = try await untilRefused(bound: 20) {
            try await logIn("+3805099\(Int.random(in: 10000...99999))", "123456", from: "203.0.113.99")
        }
        #expect(
            spraying.refusal?.code == "too_many_attempts" && (8...16).contains(spraying.before.count),
            "\(spraying.before.count) before the 429")
        #expect(spraying.before.allSatisfy { $0.status == 401 })
        #expect(try await logIn("+380501230002", "secret123", from: "192.0.2.45").status == 200, "another address")

        // A sign-up refused 429 stores nothing: the number stays free. (Each try its own number:
        // one the address's refill let through is stored, and says nothing of the refused ones.)
        var zedPhone = ""
        let signingUp = try await untilRefused(bound: 10) {
            zedPhone = "+38050124\(Int.random(in: 1000...9999))"
            return try await signUp("Zed", zedPhone, from: "203.0.113.99")
        }
        #expect(signingUp.refusal?.retryAfter != nil, "\(signingUp.before.map(\.body))")
        #expect(
            try await logIn(zedPhone, "secret123", from: "192.0.2.46").code == "invalid_credentials", "the refused sign-up was not stored")
        #expect(try await signUp("Zed", zedPhone, from: "192.0.2.46").status == 201)

        // Bob's token: 5 requests a minute, then 429 (more pass only if the minute refilled some).
        let busy = try await untilRefused(bound: 20) { try await send("GET", "/v1/me", from: "192.0.2.47", token: token) }
        #expect(
            busy.before.allSatisfy { $0.status == 200 } && (5...12).contains(busy.before.count),
            "\(busy.before.count) requests before the 429")
        #expect(
            busy.refusal?.code == "too_many_requests" && (1...60).contains(busy.refusal?.retryAfter ?? 0),
            "\(String(describing: busy.refusal?.body))")
        // Refreshing gets Bob a new token, not more requests (issue 38): every token of a user
        // shares one bucket (a fresh one would pass 5).
        let bobRefresh = try #require(bob.body["refresh_token"]?.stringValue)
        let refreshed = try await send("POST", "/v1/auth/refresh", from: "192.0.2.47", #"{"refresh_token":"\#(bobRefresh)"}"#)
        let newToken = try #require(refreshed.body["token"]?.stringValue, "\(refreshed.body)")
        let afterRefresh = try await untilRefused(bound: 6) { try await send("GET", "/v1/me", from: "192.0.2.47", token: newToken) }
        #expect(
            afterRefresh.refusal?.code == "too_many_requests" && afterRefresh.before.count <= 2,
            "\(afterRefresh.before.count) requests with the new token")
        // A session refreshes 4 times a minute here (the account's attempts), then 429: a chain of
        // refreshes mints no endless tokens.
        var chained = try #require(refreshed.body["refresh_token"]?.stringValue)
        let chain = try await untilRefused(bound: 12) {
            let answer = try await send("POST", "/v1/auth/refresh", from: "192.0.2.48", #"{"refresh_token":"\#(chained)"}"#)
            chained = answer.body["refresh_token"]?.stringValue ?? chained
            return answer
        }
        #expect(
            chain.before.allSatisfy { $0.status == 200 } && (3...8).contains(chain.before.count),
            "\(chain.before.count) refreshes before the 429")
        #expect(chain.refusal?.code == "too_many_attempts", "\(String(describing: chain.refusal?.body))")
        // Made-up refresh tokens count against the address like garbage bearer tokens.
        let madeUp = try await untilRefused(bound: 20) {
            try await send(
                "POST", "/v1/auth/refresh", from: "198.51.100.210", #"{"refresh_token":"s-\#(UUID().uuidString.prefix(8)).short"}"#)
        }
        #expect(
            madeUp.before.allSatisfy { $0.status == 401 } && (8...16).contains(madeUp.before.count),
            "\(madeUp.before.count) made-up refreshes before the 429")
        #expect(madeUp.refusal?.code == "too_many_attempts")

        // Another account goes on.
        let zed = try await logIn(zedPhone, "secret123", from: "192.0.2.46")
        let zedToken = try #require(zed.body["token"]?.stringValue, "\(zed.body)")
        #expect(try await send("GET", "/v1/me", from: "192.0.2.47", token: zedToken).status == 200)

        // Garbage bearer tokens (issue 38): each one users refuses as not its own counts against the
        // address (8 a minute here), so a flood from one address is refused 429 before users is
        // asked again; a token the gateway knows goes on from there, and another address's bad
        // token is still told 401.
        let garbage = try await untilRefused(bound: 20) {
            try await send("GET", "/v1/me", from: "198.51.100.200", token: "garbage.\(UUID().uuidString).x")
        }
        #expect(
            garbage.before.allSatisfy { $0.status == 401 } && (8...16).contains(garbage.before.count),
            "\(garbage.before.count) refused tokens before the 429")
        #expect(
            garbage.refusal?.code == "too_many_attempts" && (1...60).contains(garbage.refusal?.retryAfter ?? 0),
            "\(String(describing: garbage.refusal?.body))")
        #expect(try await send("GET", "/v1/me", from: "198.51.100.200", token: zedToken).status == 200, "a known token")
        #expect(try await send("GET", "/v1/me", from: "198.51.100.201", token: "garbage.token.x").status == 401)
    }
}
