import Foundation
import Testing
import Wire

/// A ride's share link as an attacker and a careless driver would try it, through real processes
/// (issue 38): only the rider makes or revokes it; revoked, it is dead at once; it expires a set
/// time after the ride; guessing ids from one address is refused 429 — each refusal changing nothing.
@Suite(.serialized) struct RideShareIntegrationTests {
    typealias Apps = GatewayIntegrationTests.Apps

    @Test func aShareIsTheRidersToMakeAndRevokeItExpiresAndGuessingIsLimited() async throws {
        try await withTestBus("ride-shares") { bus in
            let apps = try await Apps.start(
                bus, orders: ["--share-lifetime-s", "3"], gateway: ["--address-share-reads-per-min", "20", "--forwarded-for-hops", "1"])
            let (gateway, rider, driver) = (apps.gateway, apps.rider.token, apps.driver.token)
            let booked = try await gateway.request("POST", "/v1/orders", token: rider, GatewayIntegrationTests.booking)
            let id = try #require(booked.body["id"]?.stringValue, "\(booked.body)")
            #expect(try await gateway.request("POST", "/v1/orders/\(id)/accept", token: driver).status == 200)

            // The driver may not share the rider's ride, nor end its link.
            let byDriver = try await gateway.request("GET", "/v1/orders/\(id)/share", token: driver)
            #expect(byDriver.status == 403 && byDriver.body["error"]?["code"] == "forbidden", "\(byDriver.body)")
            #expect(try await gateway.request("DELETE", "/v1/orders/\(id)/share", token: driver).status == 403)

            let first = try await gateway.request("GET", "/v1/orders/\(id)/share", token: rider)
            let shareID = try #require(first.body["share_id"]?.stringValue, "\(first.body)")
            let url = try #require(first.body["share_url"]?.stringValue)
            #expect(try await gateway.request("GET", "/v1/ride-shares/\(shareID)").status == 200)

            // Revoked: dead at once, on the page too; the ride goes on as it was.
            let revoked = try await gateway.request("DELETE", "/v1/orders/\(id)/share", token: rider)
            #expect(revoked.status == 200 && revoked.body["share_id"] == nil, "\(revoked.body)")
            #expect(["ACCEPTED", "PICKING_UP"].contains(revoked.body["status"]?.stringValue ?? ""), "\(revoked.body)")
            let revokedAgain = try await gateway.request("DELETE", "/v1/orders/\(id)/share", token: rider)
            #expect(
                revokedAgain.status == 200 && revokedAgain.body["share_id"] == nil, "revoking again changes nothing: \(revokedAgain.body)")
            let dead = try await gateway.request("GET", "/v1/ride-shares/\(shareID)")
            #expect(dead.status == 404 && dead.body["error"]?["code"] == "unknown_share", "\(dead.body)")
            #expect(HeadlessBrowser.text(of: "status", in: try await HeadlessBrowser.dom(url)) == "not found")
            #expect(
                try await gateway.request("GET", "/v1/orders/\(id)", token: rider).body["driver"]?["name"] == "Dan", "the ride is untouched"
            )
            let second = try await gateway.request("GET", "/v1/orders/\(id)/share", token: rider)
            let newID = try #require(second.body["share_id"]?.stringValue)
            #expect(newID != shareID, "asking again makes a new link")

            // Cancelled: the link works until 3 s (orders' --share-lifetime-s) after, then 410.
            #expect(
                try await gateway.request("POST", "/v1/orders/\(id)/cancel", token: rider, #"{"reason":"plans changed"}"#).body["status"]
                    == "CANCELLED")
            let ended = try await gateway.request("GET", "/v1/ride-shares/\(newID)")
            #expect(ended.status == 200 && ended.body["ride"]?["expires_at"] != nil, "\(ended.body)")
            try await Task.sleep(for: .seconds(4))
            let expired = try await gateway.request("GET", "/v1/ride-shares/\(newID)")
            #expect(expired.status == 410 && expired.body["error"]?["code"] == "share_expired", "\(expired.status) \(expired.body)")

            // Guessing ids: one address gets 20 reads a minute here, then 429; another goes on.
            func guess(from address: String) async throws -> (status: Int, body: JSONValue) {
                let made = String((0..<20).map { _ in "23456789abcdefghijkmnpqrstuvwxyz".randomElement()! })
                return try await gateway.request("GET", "/v1/ride-shares/\(made)", headers: ["X-Forwarded-For": address])
            }
            var answers: [Int] = []
            var refusal: JSONValue?
            for _ in 0..<40 {
                let answer = try await guess(from: "203.0.113.50")
                if answer.status == 429 {
                    refusal = answer.body
                    break
                }
                answers.append(answer.status)
            }
            #expect(
                answers.allSatisfy { $0 == 404 } && (20...30).contains(answers.count), "\(answers.count) guesses before the 429: \(answers)"
            )
            #expect(refusal?["error"]?["code"] == "too_many_requests", "\(String(describing: refusal))")
            #expect(try await guess(from: "203.0.113.51").status == 404, "another address")
        }
    }
}
