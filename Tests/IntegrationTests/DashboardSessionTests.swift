import Foundation
import PlatformLauncher
import Testing
import Wire

/// Issue 38: the dashboard's own sign-in for a browser — a signed session cookie and a CSRF token
/// bound to it — through `ride-gateway` and `ride-orders`: throttled as HTTP Basic is, a change
/// without the session's token refused, a tampered or ended session refused, signed out at once.
@Suite(.timeLimit(.minutes(2))) struct DashboardSessionTests {
    static func cookie(_ name: String, in setCookie: String?) -> String? {
        guard let setCookie, let match = setCookie.firstMatch(of: try! Regex("(?:^|, )\(name)=([^;,]*)")) else { return nil }
        return match.output[1].substring.map(String.init)
    }

    @Test func theDashboardSignsInWithASessionWhoseChangesCarryItsToken() async throws {
        try await withTestBus("dashboard-session") { bus in
            _ = try await TestService.orders(on: bus)
            let gateway = try await TestGateway.start(on: bus, arguments: ["--address-attempts-per-min", "5", "--forwarded-for-hops", "1"])
            func signIn(_ key: String, from address: String) async throws -> HTTPProbe.Response {
                try await HTTPProbe.send(
                    "POST", gateway.base + "/dashboard/session", headers: ["Content-Type": "application/json", "X-Forwarded-For": address],
                    body: Array(#"{"account_id":"ridesharing","secret_key":"\#(key)"}"#.utf8), timeout: .seconds(10))
            }
            // A browser without a session is sent to the sign-in form.
            let page = try await HTTPProbe.send("GET", gateway.base + "/dashboard", timeout: .seconds(10))
            #expect(page.status == 200 && String(decoding: page.body, as: UTF8.self).contains("Operator sign-in"), "\(page.status)")
            // Guessing the key through the form is throttled as through HTTP Basic.
            var statuses: [Int] = []
            for guess in 0..<20 where statuses.last != 429 {
                statuses.append(try await signIn("guess-\(guess)", from: "203.0.113.90").status)
            }
            #expect(
                statuses.dropLast().allSatisfy { $0 == 401 } && (5...8).contains(statuses.count - 1) && statuses.last == 429, "\(statuses)")
            #expect(
                try await signIn("sk_dev_ridesharing", from: "203.0.113.90").status == 429, "the right key too, from the guessing address")
            let signed = try await signIn("sk_dev_ridesharing", from: "203.0.113.91")
            let setCookie = signed.headers["set-cookie"]
            let session = try #require(Self.cookie("ride_operator", in: setCookie), "\(signed.headers)")
            let csrf = try #require(Self.cookie("ride_operator_csrf", in: setCookie))
            #expect(
                setCookie?.contains("HttpOnly") == true && setCookie?.contains("SameSite=Strict") == true
                    && setCookie?.contains("Path=/dashboard") == true)
            let body = try JSONCoding.decode(JSONValue.self, from: Array(signed.body))
            #expect(body["csrf_token"] == .string(csrf) && body["expires_at"] != nil, "\(body)")

            let withSession = ["Cookie": "ride_operator=\(session); ride_operator_csrf=\(csrf)"]
            #expect(try await gateway.request("GET", "/dashboard/data", headers: withSession).status == 200)
            let dashboard = try await HTTPProbe.send("GET", gateway.base + "/dashboard", headers: withSession, timeout: .seconds(10))
            #expect(String(decoding: dashboard.body, as: UTF8.self).contains("id=\"sign-out\""), "the dashboard itself")
            // A change: the cookie alone (what another site's form makes the browser send) is refused;
            // with the session's token it reaches orders (an unknown order).
            let refund = "/dashboard/orders/o-0000000000000000/refund"
            for (headers, code) in [([:], "csrf_token_invalid"), (["X-CSRF-Token": "A" + csrf.dropFirst()], "csrf_token_invalid")] {
                let reply = try await gateway.request("POST", refund, headers: withSession.merging(headers) { $1 })
                #expect(reply.status == 403 && reply.body["error"]?["code"] == .string(code), "\(headers): \(reply)")
            }
            let tokened = withSession.merging(["X-CSRF-Token": csrf]) { $1 }
            #expect(try await gateway.request("POST", refund, headers: tokened).status == 404)
            let crossSite = try await gateway.request("POST", refund, headers: tokened.merging(["Origin": "http://evil.example"]) { $1 })
            #expect(crossSite.status == 403 && crossSite.body["error"]?["code"] == "cross_site_request")
            // A session made up or stretched is no session; nor is one for the HyperTrack routes.
            let parts = session.split(separator: ".")
            let stretched = "\(Int(parts[0])! + 86_400).\(parts[1]).\(parts[2])"
            let tampered = try await gateway.request("GET", "/dashboard/data", headers: ["Cookie": "ride_operator=\(stretched)"])
            #expect(tampered.status == 401 && tampered.body["error"]?["code"] == "session_invalid", "\(tampered)")
            #expect(try await gateway.request("GET", "/trips/t-0000000000000000", headers: withSession).status == 401)
            // Signing out clears both cookies.
            let out = try await HTTPProbe.send("DELETE", gateway.base + "/dashboard/session", headers: withSession, timeout: .seconds(10))
            #expect(out.status == 204 && Self.cookie("ride_operator", in: out.headers["set-cookie"]) == "", "\(out.headers)")
            #expect(out.headers["set-cookie"]?.contains("Max-Age=0") == true)
        }
    }
}
