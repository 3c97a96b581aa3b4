import Bus
import Foundation
import PlatformLauncher
import Testing
import Wire

/// Retries with an `Idempotency-Key` through `ride-gateway` and the real services: a reply lost on
/// the way and the request sent again books once, chats once, cancels and rates once — the second
/// answer is the first one, status and body.
@Suite(.serialized) struct IdempotencyIntegrationTests {
    typealias Apps = GatewayIntegrationTests.Apps
    static let booking = GatewayIntegrationTests.booking

    func key(_ name: String) -> [String: String] { ["Idempotency-Key": "\(name)-\(UUID().uuidString)"] }

    @Test func aRetriedBookingChatAndCancelAnswerTheFirstReply() async throws {
        try await withTestBus("idempotency") { bus in
            let apps = try await Apps.start(bus)
            let (gateway, ann, dan) = (apps.gateway, apps.rider.token, apps.driver.token)
            func orders() async throws -> [JSONValue] {
                try await gateway.request("GET", "/v1/orders", token: ann).body["orders"]?.arrayValue ?? []
            }

            let booking = key("book")
            let booked = try await gateway.request("POST", "/v1/orders", token: ann, Self.booking, headers: booking)
            #expect(booked.status == 201, "\(booked.body)")
            guard let id = booked.body["id"]?.stringValue else { throw TestFailure("booking: \(booked)") }
            let again = try await gateway.request("POST", "/v1/orders", token: ann, Self.booking, headers: booking)
            #expect(again.status == 201, "the first status, not the repeat rule's 200")
            #expect(again.body == booked.body, "the first body, version and all")
            let other = Self.booking.replacingOccurrences(of: "Sobornyi Ave 1", with: "Sobornyi Ave 2")
            let reused = try await gateway.request("POST", "/v1/orders", token: ann, other, headers: booking)
            #expect(reused.status == 422, "\(reused.body)")
            #expect(reused.body["error"]?["code"] == "idempotency_key_reused")
            #expect(try await orders().count == 1, "booked once")

            let malformed = try await gateway.request(
                "POST", "/v1/orders", token: ann, Self.booking, headers: ["Idempotency-Key": "two words"])
            #expect(malformed.status == 400)
            #expect(malformed.body["error"]?["code"] == "invalid_idempotency_key")
            #expect(malformed.body["error"]?["message"]?.stringValue?.contains("Idempotency-Key") == true)
            let tooLong = try await gateway.request(
                "POST", "/v1/orders/\(id)/messages", token: ann, #"{"text":"hi"}"#,
                headers: ["Idempotency-Key": String(repeating: "k", count: 256)])
            #expect(tooLong.status == 400)

            #expect(try await gateway.request("POST", "/v1/orders/\(id)/accept", token: dan).status == 200)
            try await apps.status(of: id, is: "PICKING_UP")
            let chat = key("chat")
            let sent = try await gateway.request(
                "POST", "/v1/orders/\(id)/messages", token: ann, #"{"text":"I am at the door"}"#, headers: chat)
            #expect(sent.status == 201, "\(sent.body)")
            let resent = try await gateway.request(
                "POST", "/v1/orders/\(id)/messages", token: ann, #"{"text":"I am at the door"}"#, headers: chat)
            #expect(resent.status == 201)
            #expect(resent.body == sent.body)
            // Dan's key of the same name is his own.
            let dans = try await gateway.request("POST", "/v1/orders/\(id)/messages", token: dan, #"{"text":"On my way"}"#, headers: chat)
            #expect(dans.status == 201, "\(dans.body)")
            let messages = try await gateway.request("GET", "/v1/orders/\(id)/messages", token: ann).body["messages"]?.arrayValue ?? []
            #expect(messages.map { $0["text"] } == ["I am at the door", "On my way"], "stored once each; nothing for the refused 400")

            let cancel = key("cancel")
            let cancelled = try await gateway.request(
                "POST", "/v1/orders/\(id)/cancel", token: ann, #"{"reason":"plans changed"}"#, headers: cancel)
            #expect(cancelled.status == 200, "\(cancelled.body)")
            #expect(cancelled.body["status"] == "CANCELLED")
            let recancelled = try await gateway.request(
                "POST", "/v1/orders/\(id)/cancel", token: ann, #"{"reason":"plans changed"}"#, headers: cancel)
            #expect(recancelled.status == 200, "the first answer, not 409: \(recancelled.body)")
            #expect(recancelled.body == cancelled.body)
            #expect(
                try await gateway.request("POST", "/v1/orders/\(id)/cancel", token: ann, #"{"reason":"plans changed"}"#).status == 409,
                "without a key, as before")
        }
    }

    /// A request without an `Idempotency-Key` is sent to its service once (issue 38): a sign-up
    /// slower than the MDP client's attempt (2.5 s; 10 million PBKDF2 rounds here) used to be sent
    /// three times, each one hashing; now the app is told the reply did not come, and the op ran once.
    @Test func aChangingRequestWithoutAKeyRunsOnceWhenItsReplyIsLate() async throws {
        try await withTestBus("unkeyed-once") { bus in
            let users = try await TestService.start(
                on: bus, service: "users", executable: "ride-users", arguments: ["--password-rounds", "10000000"])
            let gateway = try await TestGateway.start(on: bus)
            func registrations() async throws -> Double {
                let text = try await HTTPProbe.get("http://\(users.host.address):\(users.httpPort)/metrics").text
                return text.split(separator: "\n").filter {
                    $0.hasPrefix("ride_op_duration_seconds_count{") && $0.contains("op=\"register\"")
                }
                .compactMap { Double($0.split(separator: " ").last ?? "") }.reduce(0, +)
            }
            let signUp = #"{"role":"rider","name":"Slow","phone_number":"+380501239999","password":"secret123"}"#
            let started = ContinuousClock.now
            let late = try await gateway.request("POST", "/v1/users", signUp)
            #expect([503, 504].contains(late.status), "the reply came after the client's one attempt: \(late.status) \(late.body)")
            #expect(ContinuousClock.now - started < .seconds(5), "no second attempt was waited for")
            // The op finishes in users meanwhile; three attempts would have run it three times by
            // the broker's 10 s (each attempt 2.5 s apart).
            var ran = 0.0
            let deadline = ContinuousClock.now + .seconds(60)
            while ran < 1, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(200))
                ran = try await registrations()
            }
            try await Task.sleep(for: .seconds(8))
            #expect(try await registrations() == 1, "users registered once")
        }
    }

    @Test func aRetriedRatingAnswersTheFirstReply() async throws {
        try await withTestBus("idempotency-rating") { bus in
            let apps = try await Apps.start(bus)
            let id = try await apps.ride()
            let rating = key("rate")
            let rated = try await apps.gateway.request(
                "POST", "/v1/orders/\(id)/rating", token: apps.rider.token, #"{"stars":5}"#, headers: rating)
            #expect(rated.status == 200, "\(rated.body)")
            let again = try await apps.gateway.request(
                "POST", "/v1/orders/\(id)/rating", token: apps.rider.token, #"{"stars":5}"#, headers: rating)
            #expect(again.status == 200, "the first answer, not 409: \(again.body)")
            #expect(again.body == rated.body)
            let changed = try await apps.gateway.request(
                "POST", "/v1/orders/\(id)/rating", token: apps.rider.token, #"{"stars":1}"#, headers: rating)
            #expect(changed.status == 422)
            let order = try await apps.gateway.request("GET", "/v1/orders/\(id)", token: apps.rider.token)
            #expect(order.body["rating_by_rider"]?["stars"] == 5, "\(order.body)")
        }
    }

    /// The users service remembers keys too: saving a place twice with one key saves it once.
    @Test func aRetriedSavedPlaceIsSavedOnce() async throws {
        try await withTestBus("idempotency-places") { bus in
            let apps = try await Apps.start(bus)
            let place = #"{"label":"other","name":"Gym","place":{"latitude":47.84,"longitude":35.12}}"#
            let saving = key("place")
            let saved = try await apps.gateway.request("POST", "/v1/me/places", token: apps.rider.token, place, headers: saving)
            #expect(saved.status == 201, "\(saved.body)")
            let again = try await apps.gateway.request("POST", "/v1/me/places", token: apps.rider.token, place, headers: saving)
            #expect(again.status == 201 && again.body == saved.body, "the first answer: \(again.body)")
            let places = try await apps.gateway.request("GET", "/v1/me/places", token: apps.rider.token).body["places"]?.arrayValue ?? []
            #expect(places.count == 1, "saved once: \(places)")
            let other = try await apps.gateway.request(
                "POST", "/v1/me/places", token: apps.rider.token, place.replacingOccurrences(of: "Gym", with: "Pool"), headers: saving)
            #expect(other.status == 422 && other.body["error"]?["code"] == "idempotency_key_reused", "\(other.body)")
        }
    }

    /// A keyed request: sent twice, the second answer is the first (status and body); the same key
    /// with `other` (another body) is 422 `idempotency_key_reused`.
    func expectOnce(
        _ gateway: TestGateway, _ method: String, _ path: String, token: String? = nil, _ body: String?, other: String?,
        headers: [String: String] = [:], status: Int = 200
    ) async throws -> JSONValue {
        let keyed = headers.merging(key(path)) { $1 }
        let first = try await gateway.request(method, path, token: token, body, headers: keyed)
        #expect(first.status == status, "\(method) \(path): \(first.body)")
        let again = try await gateway.request(method, path, token: token, body, headers: keyed)
        #expect(again.status == first.status && again.body == first.body, "\(method) \(path) again: \(again.body), first \(first.body)")
        if let other {
            let reused = try await gateway.request(method, path, token: token, other, headers: keyed)
            #expect(
                reused.status == 422 && reused.body["error"]?["code"] == "idempotency_key_reused",
                "\(method) \(path), another body: \(reused.body)")
        }
        return first.body
    }

    /// Every POST, PUT, PATCH and DELETE the API document lists takes the key, and each not tried
    /// above answers a retry with its first reply: sign-up, log-in, a refresh, the profile, availability, a
    /// location batch, a push token, a deleted place and the HyperTrack trip routes.
    @Test func everyChangingRouteAnswersARetryWithItsFirstReply() async throws {
        try await withTestBus("idempotency-routes") { bus in
            let apps = try await Apps.start(bus)
            _ = try await TestService.start(on: bus, service: BusContract.Service.notifications, executable: "ride-notifications")
            let gateway = apps.gateway
            let document = try await gateway.request("GET", "/openapi.json").body
            var changing: Set<String> = []
            for (path, item) in document["paths"]?.objectValue ?? [:] {
                for (method, operation) in item.objectValue ?? [:] where ["post", "put", "patch", "delete"].contains(method) {
                    changing.insert("\(method.uppercased()) \(path)")
                    let parameters = operation["parameters"]?.arrayValue ?? []
                    #expect(
                        parameters.contains { $0["name"] == "Idempotency-Key" && $0["in"] == "header" },
                        "\(method) \(path) documents the key")
                }
            }
            let tried: Set<String> = [
                "POST /v1/orders", "POST /v1/orders/{id}/messages", "POST /v1/orders/{id}/cancel", "POST /v1/orders/{id}/rating",
                "POST /v1/me/places",
                "POST /v1/users", "POST /v1/sessions", "PATCH /v1/me", "PUT /v1/me/availability", "POST /v1/devices/{device_id}/locations",
                "POST /v1/notifications/push_tokens", "DELETE /v1/me/places/{place_id}", "POST /trips", "POST /trips/{trip_id}/complete",
                // Each one op, keyed as the routes above; answers that change nothing, or covered by the lifecycle tests.
                "POST /v1/orders/{id}/accept", "POST /v1/orders/{id}/decline", "POST /v1/orders/{id}/start", "POST /v1/orders/{id}/end",
                "POST /v1/fares/estimate", "POST /devices/nearby", "POST /v1/auth/refresh",
                // A second log-out is refused (401 token_revoked): the session it names is over.
                "POST /v1/auth/logout",
                // Card payments (PaymentsIntegrationTests): each ask is a new ephemeral key or onboarding link, the
                // webhook's events are taken once by their id.
                "POST /v1/me/payment-sheet", "POST /v1/me/payouts/onboarding", "POST /v1/providers/stripe/webhook",
                // Each ask a new page at the provider (a Checkout Session); a session saves one card (FakeStripeCheckoutTests).
                "POST /v1/me/cards/setup",
                // Paying again is keyed by its round at the provider: a retried ask is the same charge (PaymentsIntegrationTests).
                "POST /v1/orders/{id}/payment",
                // A refund asked again is the same refund (aLateCancellationIsChargedItsFeeAndAnOperatorRefundsIt).
                "POST /dashboard/orders/{id}/refund",
                // Retried in PhotoIntegrationTests and RideReportIntegrationTests.
                "PUT /v1/me/photo", "PUT /v1/me/car/photo", "POST /v1/orders/{id}/reports", "POST /dashboard/reports/{report_id}/answer",
                // Social sign-in (SocialSignInIntegrationTests): signing in again with an identity finds the account
                // it made (a new session, as a second log-in); linking an identity already linked answers 200.
                "POST /v1/auth/oidc/{provider}", "POST /v1/me/identities/{provider}",
                // Revoking a ride's link again changes nothing and answers the order (RideShareIntegrationTests).
                "DELETE /v1/orders/{id}/share",
                // The dashboard's sign-in keeps nothing: signing in again is another session (as a
                // second log-in), signing out again clears the cookies again (DashboardSessionTests).
                "POST /dashboard/session", "DELETE /dashboard/session",
                // A driver's arrival or no-show said again is the order as it is (OffScriptRideTests); an
                // account suspended or reinstated again stays as the first time left it (SuspensionIntegrationTests).
                "POST /v1/orders/{id}/arrive", "POST /v1/orders/{id}/no-show", "POST /dashboard/users/{id}/suspend",
                "POST /dashboard/users/{id}/reinstate",
                // The same new drop-off again is the order as it is, one event (OffScriptRideTests).
                "POST /v1/orders/{id}/destination",
                // HyperTrack's delivery sent again is refused as a replay, nothing done twice (HyperTrackWebhookIntegrationTests).
                "POST /v1/providers/hypertrack/webhook",
                // A document uploaded again is the same document; an approval given or withdrawn again
                // stays as the first left it (DriverApprovalIntegrationTests, DriverDocumentsStorageTests).
                "PUT /v1/me/documents/{kind}", "POST /dashboard/users/{id}/approve", "POST /dashboard/users/{id}/withdraw-approval",
            ]
            #expect(changing.subtracting(tried).isEmpty, "changing routes no test retries: \(changing.subtracting(tried).sorted())")

            let zoe = #"{"role":"rider","name":"Zoe","phone_number":"+380501110077","password":"secret123"}"#
            let signedUp = try await expectOnce(
                gateway, "POST", "/v1/users", zoe, other: zoe.replacingOccurrences(of: "Zoe", with: "Zed"), status: 201)
            let login = #"{"phone_number":"+380501110077","password":"secret123"}"#
            let session = try await expectOnce(gateway, "POST", "/v1/sessions", login, other: nil)
            guard let zoeToken = session["token"]?.stringValue, let refresh = session["refresh_token"]?.stringValue, signedUp["id"] != nil
            else {
                throw TestFailure("sign-up \(signedUp), log-in \(session)")
            }
            // A refresh whose reply was lost, sent again with its key, gets the same pair, not a
            // refusal as a reused refresh token (which would end the session).
            let refreshed = try await expectOnce(gateway, "POST", "/v1/auth/refresh", #"{"refresh_token":"\#(refresh)"}"#, other: nil)
            #expect(refreshed["refresh_token"] != nil && refreshed["refresh_token"]?.stringValue != refresh)
            // No secret at rest (issue 38): users' requests table keeps those replies sealed, so its
            // files hold neither pair (an access token is stored nowhere; refresh tokens only hashed).
            let files = try FileManager.default.contentsOfDirectory(atPath: "\(bus.dataRoot)/users").filter { $0.hasPrefix("users.sqlite") }
            #expect(!files.isEmpty)
            for file in files {
                let bytes = try Data(contentsOf: URL(fileURLWithPath: "\(bus.dataRoot)/users/\(file)"))
                for secret in [zoeToken, refresh, refreshed["token"]?.stringValue ?? "-", refreshed["refresh_token"]?.stringValue ?? "-"] {
                    #expect(bytes.range(of: Data(secret.utf8)) == nil, "\(file) holds a token in plain text")
                }
            }
            _ = try await expectOnce(gateway, "PATCH", "/v1/me", token: zoeToken, #"{"name":"Zoë"}"#, other: #"{"name":"Zoey"}"#)
            _ = try await expectOnce(
                gateway, "POST", "/v1/notifications/push_tokens", token: zoeToken,
                #"{"token":"fcm-zoe-1:APA91bHun4MxP5egoKMwt2KZFBaF","platform":"fcm"}"#,
                other: #"{"token":"fcm-zoe-2:APA91bHun4MxP5egoKMwt2KZFBaF","platform":"fcm"}"#)
            let place = try await gateway.request(
                "POST", "/v1/me/places", token: zoeToken, #"{"label":"home","place":{"latitude":47.84,"longitude":35.12}}"#)
            guard let placeID = place.body["id"]?.stringValue else { throw TestFailure("place: \(place)") }
            _ = try await expectOnce(gateway, "DELETE", "/v1/me/places/\(placeID)", token: zoeToken, nil, other: nil)
            #expect(
                try await gateway.request("DELETE", "/v1/me/places/\(placeID)", token: zoeToken).status == 404,
                "deleted once; without a key, as before")

            let dan = apps.driver.token
            let off = try await expectOnce(
                gateway, "PUT", "/v1/me/availability", token: dan, #"{"available":false}"#, other: #"{"available":true}"#)
            #expect(off["device"]?["available"] == false, "\(off)")
            let fix = #"{"latitude":47.83,"longitude":35.13,"recorded_at":"\#(RFC3339.format(Date()))","accuracy":5}"#
            _ = try await expectOnce(
                gateway, "POST", "/v1/devices/gw-dan-phone/locations", token: dan, #"{"batch_id":50,"locations":[\#(fix)]}"#,
                other: #"{"batch_id":51,"locations":[]}"#)

            let basic = ["Authorization": "Basic " + Data("ridesharing:sk_dev_ridesharing".utf8).base64EncodedString()]
            let trip =
                #"{"device_id":"gw-dan-phone","destination":{"radius":100,"geometry":{"type":"Point","coordinates":[\#(GatewayIntegrationTests.pickup.longitude),\#(GatewayIntegrationTests.pickup.latitude)]}}}"#
            let created = try await expectOnce(
                gateway, "POST", "/trips/", trip, other: trip.replacingOccurrences(of: "\"radius\":100", with: "\"radius\":150"),
                headers: basic, status: 201)
            guard let tripID = created["trip_id"]?.stringValue else { throw TestFailure("trip: \(created)") }
            _ = try await expectOnce(gateway, "POST", "/trips/\(tripID)/complete", nil, other: nil, headers: basic)
        }
    }
}
