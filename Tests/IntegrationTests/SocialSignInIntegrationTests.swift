import Bus
import Foundation
import PlatformLauncher
import TestPostgres
import Testing
import Wire

/// Social sign-in through the real processes (`ride-users`, `ride-gateway` on a bus) against a
/// local identity provider (`FakeIdentityProvider`) that plays Apple, Google and Facebook: a valid
/// token makes an account once and logs into it after; forged, foreign, expired and malformed
/// tokens are 401 with the failed check named, store nothing and are logged once.
@Suite(.serialized) struct SocialSignInIntegrationTests {
    typealias Answer = (status: Int, body: JSONValue)

    func signIn(_ gateway: TestGateway, _ provider: String, _ body: [String: JSONValue]) async throws -> Answer {
        try await gateway.request(
            "POST", "/v1/auth/oidc/\(provider)", String(decoding: try JSONCoding.encode(JSONValue.object(body)), as: UTF8.self))
    }

    func code(_ answer: Answer) -> String? { answer.body["error"]?["code"]?.stringValue }

    func usersStored(_ users: TestService) async throws -> Double? {
        let health = try await HTTPProbe.send("GET", "http://127.0.0.1:\(users.httpPort)/health", timeout: .seconds(10))
        return (try? JSONCoding.decode(JSONValue.self, from: Array(health.body)))?["details"]?["users"]?.numberValue
    }

    @Test func aVerifiedTokenMakesOneAccountAndBadTokensAreRefused() async throws {
        let idp = try await FakeIdentityProvider.start()
        defer { idp.stop() }
        try await withTestBus("social-sign-in") { bus in
            let users = try await TestService.users(on: bus)
            let gateway = try await TestGateway.start(on: bus, arguments: idp.gatewayArguments + ["--address-attempts-per-min", "1000"])

            // Google (RS256): the first sign-in makes a rider named by the token; the next finds them.
            let first = try await signIn(
                gateway, "google", ["id_token": .string(try await idp.idToken("g-1", name: "Ann Google")), "role": "rider"])
            #expect(first.status == 200, "\(first)")
            let ann = try #require(first.body["user"]?["id"]?.stringValue)
            #expect(first.body["user"]?["name"] == "Ann Google" && first.body["user"]?["phone_number"] == "", "\(first)")
            let me = try await gateway.request("GET", "/v1/me", token: try #require(first.body["token"]?.stringValue))
            #expect(me.status == 200 && me.body["id"]?.stringValue == ann, "\(me)")
            let again = try await signIn(gateway, "google", ["id_token": .string(try await idp.idToken("g-1")), "role": "rider"])
            #expect(again.status == 200 && again.body["user"]?["id"]?.stringValue == ann, "\(again)")
            #expect(again.body["refresh_token"]?.stringValue != nil)

            // Apple (ES256), with the nonce the app sent; Facebook by debug_token.
            let apple = try await signIn(
                gateway, "apple",
                [
                    "id_token": .string(try await idp.idToken("a-1", kid: "ec-1", nonce: "n-42")), "nonce": "n-42", "role": "rider",
                    "name": "Bo",
                ])
            #expect(apple.status == 200 && apple.body["user"]?["name"] == "Bo" && apple.body["user"]?["id"]?.stringValue != ann, "\(apple)")
            let facebook = try await signIn(
                gateway, "facebook", ["access_token": .string(idp.facebookToken(user: "fb-1")), "role": "rider"])
            let facebookUser = try #require(facebook.body["user"]?["id"]?.stringValue, "\(facebook)")
            let facebookAgain = try await signIn(
                gateway, "facebook", ["access_token": .string(idp.facebookToken(user: "fb-1")), "role": "rider"])
            #expect(facebookAgain.body["user"]?["id"]?.stringValue == facebookUser)

            // A new driver needs a car and a device, as at sign-up.
            let carless = try await signIn(gateway, "google", ["id_token": .string(try await idp.idToken("g-driver")), "role": "driver"])
            #expect(carless.status == 422 && carless.body["error"]?["message"]?.stringValue?.hasPrefix("car:") == true, "\(carless)")
            let driver = try await signIn(
                gateway, "google",
                [
                    "id_token": .string(try await idp.idToken("g-driver")), "role": "driver",
                    "device_id": "D0C0FFEE-0000-4000-8000-000000000001",
                    "car": ["model": "Toyota Prius", "license_plate": "ABC-123"],
                ])
            #expect(driver.status == 200 && driver.body["user"]?["role"] == "driver", "\(driver)")
            let stored = try await usersStored(users)
            #expect(stored == 4)

            // Refused: each a 401 naming the check, nothing stored, one log line for the address.
            let now = Int(Date().timeIntervalSince1970)
            try await idp.addRSA("rsa-hidden", publish: false)
            let noneHeader = Data(#"{"alg":"none","kid":"rsa-1"}"#.utf8).base64EncodedString().replacingOccurrences(of: "=", with: "")
            let refused: [(String, [String: JSONValue], String, String)] = [
                ("google", ["id_token": .string(try await idp.forgedToken("g-1"))], "token_invalid", "bad_signature"),
                (
                    "google", ["id_token": .string(try await idp.idToken("g-1") { $0.iss = "https://evil.example" })], "token_invalid",
                    "wrong_issuer"
                ),
                (
                    "google", ["id_token": .string(try await idp.idToken("g-1") { $0.aud = "someone-else" })], "token_invalid",
                    "wrong_audience"
                ),
                ("apple", ["id_token": .string(try await idp.idToken("g-1") { $0.exp = now - 3600 })], "token_expired", "expired"),
                ("google", ["id_token": .string(try await idp.idToken("g-1") { $0.iat = now + 3600 })], "token_invalid", "not_yet_valid"),
                ("google", ["id_token": .string(try await idp.idToken("g-1", kid: "rsa-hidden"))], "token_invalid", "unknown_key"),
                (
                    "apple", ["id_token": .string(try await idp.idToken("a-1", kid: "ec-1", nonce: "n-1")), "nonce": "n-2"],
                    "token_invalid", "nonce_mismatch"
                ),
                ("google", ["id_token": "not-a-jwt"], "token_invalid", "malformed"),
                ("google", ["id_token": .string(noneHeader + ".eyJzdWIiOiJnLTEifQ.")], "token_invalid", "unsupported_algorithm"),
                (
                    "facebook", ["access_token": .string(idp.facebookToken(user: "fb-2") { $0["is_valid"] = false })], "token_invalid",
                    "not_valid"
                ),
                (
                    "facebook", ["access_token": .string(idp.facebookToken(user: "fb-2") { $0["app_id"] = "999" })], "token_invalid",
                    "wrong_audience"
                ),
                (
                    "facebook", ["access_token": .string(idp.facebookToken(user: "fb-2") { $0["expires_at"] = .number(Double(now - 60)) })],
                    "token_expired", "expired"
                ),
                ("facebook", ["access_token": "EAABnever-issued"], "token_invalid", "not_valid"),
            ]
            for (provider, body, expectedCode, reason) in refused {
                var body = body
                body["role"] = "rider"
                let answer = try await signIn(gateway, provider, body)
                #expect(answer.status == 401 && code(answer) == expectedCode, "\(provider) \(reason): \(answer)")
                #expect(answer.body["error"]?["message"]?.stringValue?.contains(reason) == true, "\(provider) \(reason): \(answer)")
            }
            #expect(try await usersStored(users) == stored, "a refused token stores nothing")
            let refusals = gateway.log(bus).components(separatedBy: "token refused").count - 1
            #expect(refusals >= 1 && refusals <= 2, "logged once per address and minute, not per refusal: \(refusals)")

            // Bad requests: 4xx naming what is wrong.
            #expect(try await signIn(gateway, "google", ["role": "rider"]).status == 422)
            #expect(code(try await signIn(gateway, "google", ["id_token": .string(try await idp.idToken("g-9"))])) == "invalid_params")
            #expect(code(try await signIn(gateway, "github", ["id_token": "x", "role": "rider"])) == "unknown_provider")
            let huge = try await signIn(gateway, "google", ["id_token": .string(String(repeating: "a", count: 9000)), "role": "rider"])
            #expect(huge.status == 422, "\(huge)")
            #expect(try await usersStored(users) == stored)

            // A gateway with Google only, and 2 attempts a minute: Apple is 404; the third attempt is 429.
            let strict = try await TestGateway.start(
                on: bus,
                arguments: [
                    "--google-client-id", FakeIdentityProvider.clientID, "--google-issuer", idp.issuer, "--address-attempts-per-min", "2",
                ],
                name: "gateway-strict")
            #expect(code(try await signIn(strict, "apple", ["id_token": "x", "role": "rider"])) == "provider_not_configured")
            #expect(try await signIn(strict, "google", ["id_token": .string(try await idp.idToken("g-1")), "role": "rider"]).status == 200)
            #expect(
                try await signIn(strict, "google", ["id_token": .string(try await idp.forgedToken("g-1")), "role": "rider"]).status == 401)
            let limited = try await signIn(strict, "google", ["id_token": .string(try await idp.idToken("g-1")), "role": "rider"])
            #expect(limited.status == 429 && code(limited) == "too_many_attempts", "\(limited)")
        }
    }

    /// A stolen access token cannot add the thief's identity to the account (issue 38): a link is a
    /// way to log in as it, so it needs the proof a new password needs — a recent log-in of the
    /// session (2 s here), or the current password. Refused, nothing is linked.
    @Test func aStolenTokenCannotLinkTheThiefsIdentity() async throws {
        let idp = try await FakeIdentityProvider.start()
        defer { idp.stop() }
        try await withTestBus("social-link-stolen") { bus in
            _ = try await TestService.users(on: bus, arguments: ["--reauthentication-window-s", "2"])
            let gateway = try await TestGateway.start(on: bus, arguments: idp.gatewayArguments + ["--address-attempts-per-min", "1000"])
            let (ann, token) = try await gateway.signUp(
                #"{"role":"rider","name":"Ann","phone_number":"+380501110087","password":"secret123"}"#, phone: "+380501110087",
                password: "secret123")
            try await Task.sleep(for: .seconds(3))
            let stolen = try await gateway.request(
                "POST", "/v1/me/identities/google", token: token, #"{"id_token":"\#(try await idp.idToken("g-thief"))"}"#)
            #expect(stolen.status == 403 && code(stolen) == "reauthentication_required", "\(stolen)")
            let guessed = try await gateway.request(
                "POST", "/v1/me/identities/google", token: token,
                #"{"id_token":"\#(try await idp.idToken("g-thief"))","current_password":"guess-1"}"#)
            #expect(guessed.status == 403 && code(guessed) == "current_password_wrong", "\(guessed)")
            // Nothing was linked: the thief's identity signs into an account of its own, not Ann's.
            let thief = try await signIn(gateway, "google", ["id_token": .string(try await idp.idToken("g-thief")), "role": "rider"])
            #expect(thief.status == 200 && thief.body["user"]?["id"]?.stringValue != ann, "\(thief)")
            // The owner, with the password, links her own.
            let owner = try await gateway.request(
                "POST", "/v1/me/identities/google", token: token,
                #"{"id_token":"\#(try await idp.idToken("g-ann-2"))","current_password":"secret123"}"#)
            #expect(owner.status == 201 && owner.body["user_id"]?.stringValue == ann, "\(owner)")
        }
    }

    @Test func anIdentityLinksToALoggedInAccountAndRotatedKeysAreFetched() async throws {
        let idp = try await FakeIdentityProvider.start()
        defer { idp.stop() }
        try await withTestBus("social-link") { bus in
            _ = try await TestService.users(on: bus)
            let gateway = try await TestGateway.start(on: bus, arguments: idp.gatewayArguments + ["--address-attempts-per-min", "1000"])
            let (ann, token) = try await gateway.signUp(
                #"{"role":"rider","name":"Ann","phone_number":"+380501110088","password":"secret123"}"#, phone: "+380501110088",
                password: "secret123")

            let linked = try await gateway.request(
                "POST", "/v1/me/identities/google", token: token, #"{"id_token":"\#(try await idp.idToken("g-ann"))"}"#)
            #expect(linked.status == 201 && linked.body["user_id"]?.stringValue == ann && linked.body["provider"] == "google", "\(linked)")
            let repeated = try await gateway.request(
                "POST", "/v1/me/identities/google", token: token, #"{"id_token":"\#(try await idp.idToken("g-ann"))"}"#)
            #expect(repeated.status == 200, "\(repeated)")
            let session = try await signIn(gateway, "google", ["id_token": .string(try await idp.idToken("g-ann")), "role": "rider"])
            #expect(
                session.status == 200 && session.body["user"]?["id"]?.stringValue == ann
                    && session.body["user"]?["phone_number"] == "+380501110088", "\(session)")

            // Another account cannot take the identity; a forged token links nothing.
            let (_, other) = try await gateway.signUp(
                #"{"role":"rider","name":"Bo","phone_number":"+380501110089","password":"secret123"}"#, phone: "+380501110089",
                password: "secret123")
            let taken = try await gateway.request(
                "POST", "/v1/me/identities/google", token: other, #"{"id_token":"\#(try await idp.idToken("g-ann"))"}"#)
            #expect(taken.status == 409 && code(taken) == "identity_taken", "\(taken)")
            let forged = try await gateway.request(
                "POST", "/v1/me/identities/google", token: other, #"{"id_token":"\#(try await idp.forgedToken("g-bo"))"}"#)
            #expect(forged.status == 401, "\(forged)")
            #expect(
                try await gateway.request("POST", "/v1/me/identities/google", #"{"id_token":"x"}"#).status == 401,
                "a bearer token is required")

            // The provider rotates: a token of a key published after the JWKS was fetched verifies
            // once the gateway fetches it again (at most every 10 s), and the JWKS is not fetched per token.
            let fetches = idp.requests(to: "jwks")
            try await idp.addRSA("rsa-2")
            try await eventually("the rotated key is fetched", timeout: .seconds(90)) {
                let answer = try await signIn(
                    gateway, "google", ["id_token": .string(try await idp.idToken("g-ann", kid: "rsa-2")), "role": "rider"])
                if answer.status != 200 {
                    #expect(
                        answer.status == 401 && answer.body["error"]?["message"]?.stringValue?.contains("unknown_key") == true, "\(answer)")
                    try await Task.sleep(for: .seconds(1))
                }
                return answer.status == 200
            }
            #expect(idp.requests(to: "jwks") > fetches)
            let settled = idp.requests(to: "jwks")
            for _ in 0..<3 {
                #expect(
                    try await signIn(gateway, "google", ["id_token": .string(try await idp.idToken("g-ann")), "role": "rider"]).status
                        == 200)
            }
            #expect(idp.requests(to: "jwks") == settled, "the keys are cached")
        }
    }

    /// The same new person signing in eight times at once through two `ride-users` on one
    /// PostgreSQL database: one account, and every sign-in a session of it.
    @Test func racingSignInsOfOneNewIdentityMakeOneAccountOnPostgreSQL() async throws {
        let database = try await TestPostgresServer.newDatabase()
        try await withTestBus("social-pg") { bus in
            var instances: [TestService] = []
            for n in 1...2 {
                let instance = TestService(
                    bus: bus, name: "users-\(n)", service: BusContract.Service.users, executable: "ride-users",
                    arguments: ["--password-rounds", "2000", "--database-url", database.urlString], httpPort: try FreePort.next(),
                    environment: ["RIDE_TOKEN_SECRET": String(repeating: "k", count: 32)])
                try await instance.startProcess()
                instances.append(instance)
            }
            let users = instances[0]
            let ids = try await withThrowingTaskGroup(of: String?.self) { group in
                for _ in 0..<8 {
                    group.addTask {
                        try await users.call("login_with_identity", #"{"provider":"apple","subject":"a-race","role":"rider","name":"Ann"}"#)
                            .body["user"]?["id"]?
                            .stringValue
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(ids.count == 8 && Set(ids).count == 1 && ids.first! != nil, "\(ids)")
            let events = try await Outboxes.events(users)
            #expect(events.count == 1, "one user.registered: \(events)")
        }
    }
}

extension TestGateway {
    /// The gateway process's log so far.
    func log(_ bus: TestBus) -> String {
        (try? String(contentsOfFile: bus.supervisor.logPath(of: "gateway") ?? "", encoding: .utf8)) ?? ""
    }
}
