import Foundation
import Testing
import Wire

/// Issue 38's forged operator request, as a page on another site makes a browser send it: the
/// dashboard's refund is a bodiless POST that the browser authorises with the operator's cached
/// HTTP Basic credentials. Through `ride-gateway` and `ride-orders`: refused (403) before any
/// service hears of it, while the gateway's own page and programs without a browser pass.
@Suite(.timeLimit(.minutes(2))) struct CrossSiteRequestTests {
    @Test func anotherSitesPageCannotRefundThroughTheOperatorsBrowser() async throws {
        try await withTestBus("cross-site") { bus in
            _ = try await TestService.orders(on: bus)
            let gateway = try await TestGateway.start(on: bus)
            let basic = RideReportIntegrationTests.basic
            let path = "/dashboard/orders/o-0000000000000000/refund"
            let own = gateway.base  // http://127.0.0.1:<port>, the Host the requests go to
            let forged: [[String: String]] = [
                ["Origin": "http://evil.example"], ["Origin": "null"], ["Sec-Fetch-Site": "cross-site"], ["Sec-Fetch-Site": "same-site"],
                ["Origin": own, "Sec-Fetch-Site": "cross-site"],
            ]
            for headers in forged {
                let reply = try await gateway.request("POST", path, headers: basic.merging(headers) { $1 })
                #expect(reply.status == 403 && reply.body["error"]?["code"] == "cross_site_request", "\(headers): \(reply)")
                let answer = try await gateway.request(
                    "POST", "/dashboard/reports/rp-0000000000000000/answer", #"{"answer":"x"}"#, headers: basic.merging(headers) { $1 })
                #expect(answer.status == 403, "\(headers): \(answer)")
            }
            // The dashboard's own page (same origin), and a program that sends no Origin, reach orders: an unknown order.
            for headers in [["Origin": own, "Sec-Fetch-Site": "same-origin"], [:]] {
                let reply = try await gateway.request("POST", path, headers: basic.merging(headers) { $1 })
                #expect(reply.status == 404, "\(headers): \(reply)")
            }
            // Reading stays open to the operator's page wherever it was opened from.
            #expect(
                try await gateway.request("GET", "/dashboard/reports", headers: basic.merging(["Sec-Fetch-Site": "cross-site"]) { $1 })
                    .status == 200)
        }
    }

    /// Guessing the operator's secret key (issue 38): wrong HTTP Basic credentials count against
    /// the address's attempts (5 a minute here); out of them, even the right key is refused 429
    /// from that address until the refill, while another address signs in.
    @Test func theOperatorsKeyCannotBeGuessedFasterThanAPassword() async throws {
        try await withTestBus("operator-guessing") { bus in
            let gateway = try await TestGateway.start(on: bus, arguments: ["--address-attempts-per-min", "5", "--forwarded-for-hops", "1"])
            func dashboard(_ password: String, from address: String) async throws -> (status: Int, body: JSONValue) {
                let basic = "Basic " + Data("ridesharing:\(password)".utf8).base64EncodedString()
                return try await gateway.request("GET", "/dashboard", headers: ["Authorization": basic, "X-Forwarded-For": address])
            }
            var wrong: [Int] = []
            var refusal: JSONValue?
            for guess in 0..<20 {
                let answer = try await dashboard("guess-\(guess)", from: "203.0.113.80")
                if answer.status == 429 {
                    refusal = answer.body
                    break
                }
                wrong.append(answer.status)
            }
            #expect(wrong.allSatisfy { $0 == 401 } && (5...8).contains(wrong.count), "\(wrong.count) guesses before the 429")
            #expect(refusal?["error"]?["code"] == "too_many_attempts", "\(String(describing: refusal))")
            #expect(
                try await dashboard("sk_dev_ridesharing", from: "203.0.113.80").status == 429,
                "the right key too, from the guessing address")
            #expect(try await dashboard("sk_dev_ridesharing", from: "203.0.113.81").status == 200, "another address")
        }
    }
}
