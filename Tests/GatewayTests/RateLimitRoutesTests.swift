import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Synchronization
import Testing
import Wire

@testable import GatewayService

/// The limits as the routes apply them, before any service is asked (nobody answers on this bus:
/// an admitted attempt is a 503, a refused one a 429), and their flags.
@Suite struct RateLimitRoutesTests {
    static func login(_ phone: String, from address: String? = nil) -> (HTTPFields, ByteBuffer) {
        var headers: HTTPFields = [.contentType: "application/json"]
        if let address { headers[ClientAddress.forwardedFor] = "203.0.113.250, \(address)" }
        return (headers, ByteBuffer(string: #"{"phone_number":"\#(phone)","password":"wrong-password"}"#))
    }

    /// The status, error code and Retry-After of a log-in.
    static func attempt(_ client: some TestClientProtocol, _ phone: String, from address: String? = nil) async throws -> (
        Int, String?, String?
    ) {
        let (headers, body) = login(phone, from: address)
        return try await client.execute(uri: "/v1/sessions", method: .post, headers: headers, body: body) { response in
            let error = try? JSONCoding.decode(JSONValue.self, from: Array(response.body.readableBytesView))
            return (response.status.code, error?["error"]?["code"]?.stringValue, response.headers[.retryAfter])
        }
    }

    @Test func anAddressOutOfAttemptsIsAnswered429WithRetryAfter() async throws {
        // The limits' own clock: it moves only when the test moves it, however slowly a loaded machine answers.
        let now = Mutex(ContinuousClock.now)
        let (app, close) = try await EdgePolicyTests.application(
            ["--address-attempts-per-min", "2", "--account-attempts-per-min", "100"], clock: { now.withLock { $0 } })
        try await app.test(.router) { client in
            for phone in ["+380500000001", "+380500000002"] {
                let (status, _, _) = try await Self.attempt(client, phone)
                #expect(status == 503, "admitted, and nobody answers")
            }
            let (status, code, retryAfter) = try await Self.attempt(client, "+380500000003")
            #expect(status == 429 && code == RateLimits.Code.tooManyAttempts)
            #expect(retryAfter == "30", "two a minute refill one every 30 s: Retry-After \(retryAfter ?? "none")")
            // Without --forwarded-for-hops the header is the client's to write, and changes nothing.
            #expect(try await Self.attempt(client, "+380500000004", from: "198.51.100.7").0 == 429)
            now.withLock { $0 += .seconds(29) }
            #expect(try await Self.attempt(client, "+380500000005").0 == 429, "a second early")
            now.withLock { $0 += .seconds(1) }
            #expect(try await Self.attempt(client, "+380500000006").0 == 503, "admitted once Retry-After has passed")
        }
        await close()
    }

    @Test func anAccountOutOfAttemptsIsRefusedFromAnyAddressAndOthersAreNot() async throws {
        let now = Mutex(ContinuousClock.now)
        let (app, close) = try await EdgePolicyTests.application(
            ["--account-attempts-per-min", "2", "--address-attempts-per-min", "100", "--forwarded-for-hops", "1"],
            clock: { now.withLock { $0 } })
        try await app.test(.router) { client in
            #expect(try await Self.attempt(client, "+380500000001", from: "198.51.100.1").0 == 503)
            #expect(try await Self.attempt(client, "+380500000001", from: "198.51.100.2").0 == 503)
            let (status, code, _) = try await Self.attempt(client, "+380500000001", from: "198.51.100.3")
            #expect(status == 429 && code == RateLimits.Code.tooManyAttempts)
            #expect(try await Self.attempt(client, "+380500000002", from: "198.51.100.3").0 == 503, "another account")
        }
        await close()
    }

    @Test func theProxysAddressCountsNotWhatTheClientWrote() {
        let request = { (forwarded: [String]) -> Request in
            var head = HTTPRequest(method: .get, scheme: "http", authority: "gateway", path: "/v1/me")
            for value in forwarded { head.headerFields.append(HTTPField(name: ClientAddress.forwardedFor, value: value)) }
            return Request(head: head, body: .init(buffer: ByteBuffer()))
        }
        let forged = request(["1.1.1.1, 2.2.2.2", "203.0.113.9"])
        #expect(ClientAddress.of(forged, peer: "10.0.0.5", hops: 0) == "10.0.0.5")
        #expect(ClientAddress.of(forged, peer: "10.0.0.5", hops: 1) == "203.0.113.9")
        #expect(ClientAddress.of(forged, peer: "10.0.0.5", hops: 2) == "2.2.2.2")
        #expect(ClientAddress.of(request([]), peer: "10.0.0.5", hops: 1) == "10.0.0.5", "no header: it came round the proxy")
        #expect(ClientAddress.of(request([]), peer: nil, hops: 0) == "unknown")
        // IPv6: a subscriber's /64 is one client, whichever of its addresses it uses.
        #expect(ClientAddress.of(request([]), peer: "2001:db8:1:2:aaaa::1", hops: 0) == "2001:db8:1:2::/64")
        #expect(ClientAddress.of(request(["2001:db8:1:2:ffff:ffff:ffff:ffff"]), peer: "10.0.0.5", hops: 1) == "2001:db8:1:2::/64")
        #expect(ClientAddress.of(request(["[2001:db8:1:3::9]"]), peer: "10.0.0.5", hops: 1) == "2001:db8:1:3::/64")
        #expect(ClientAddress.of(request([]), peer: "::ffff:198.51.100.7", hops: 0) == "198.51.100.7")
        #expect(ClientAddress.network("203.0.113.9") == "203.0.113.9" && ClientAddress.network("not:an:address") == "not:an:address")
    }

    @Test func aBusyTokenIs429AndABadTokenIsLoggedOncePerAddressAndMinute() throws {
        let now = Mutex(ContinuousClock.now)
        var policy = RateLimitPolicy()
        policy.requestsPerToken = RateLimit(perMinute: 2)
        let limits = RateLimits(policy: policy, clock: { now.withLock { $0 } })
        try limits.admitRequest(userID: "u1")
        try limits.admitRequest(userID: "u1")
        let refusal = #expect(throws: GatewayError.self) { try limits.admitRequest(userID: "u1") }
        #expect(
            refusal?.status == .tooManyRequests && refusal?.code == RateLimits.Code.tooManyRequests && refusal?.headers[.retryAfter] == "30"
        )
        try limits.admitRequest(userID: "u2")
        now.withLock { $0 += .seconds(61) }
        try limits.admitRequest(userID: "u1")
    }

    @Test func malformedLimitsAreRefusedNamingTheFlag() throws {
        for (flag, value) in [
            ("--address-attempts-per-min", "0"), ("--account-attempts-per-min", "-1"), ("--token-requests-per-min", "0"),
            ("--forwarded-for-hops", "11"),
            ("--forwarded-for-hops", "-1"), ("--address-invalid-tokens-per-min", "0"), ("--socket-recheck-s", "0"),
            ("--socket-recheck-s", "3601"),
        ] {
            let refusal = EdgePolicyTests.refusal(["\(flag)=\(value)"])
            #expect(refusal.contains(flag) && refusal.contains("out of range"), "\(flag) \(value): \(refusal)")
        }
        let settings = try RideGatewayCommand.parse(["--token-requests-per-min", "5", "--forwarded-for-hops", "2"]).settings()
        #expect(settings.edge.limits.requestsPerToken == RateLimit(perMinute: 5) && settings.edge.forwardedForHops == 2)
        let sockets = try RideGatewayCommand.parse(["--address-invalid-tokens-per-min", "7", "--socket-recheck-s", "3"]).settings().edge
        #expect(sockets.limits.invalidTokensPerAddress == RateLimit(perMinute: 7) && sockets.socketRecheck == .seconds(3))
        #expect(try RideGatewayCommand.parse([]).settings().edge.limits == RateLimitPolicy(), "the defaults")
    }
}
