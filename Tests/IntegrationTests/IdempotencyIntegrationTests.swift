import Foundation
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

            let malformed = try await gateway.request("POST", "/v1/orders", token: ann, Self.booking, headers: ["Idempotency-Key": "two words"])
            #expect(malformed.status == 400)
            #expect(malformed.body["error"]?["code"] == "invalid_idempotency_key")
            #expect(malformed.body["error"]?["message"]?.stringValue?.contains("Idempotency-Key") == true)
            let tooLong = try await gateway.request(
                "POST", "/v1/orders/\(id)/messages", token: ann, #"{"text":"hi"}"#, headers: ["Idempotency-Key": String(repeating: "k", count: 256)])
            #expect(tooLong.status == 400)

            #expect(try await gateway.request("POST", "/v1/orders/\(id)/accept", token: dan).status == 200)
            try await apps.status(of: id, is: "PICKING_UP")
            let chat = key("chat")
            let sent = try await gateway.request("POST", "/v1/orders/\(id)/messages", token: ann, #"{"text":"I am at the door"}"#, headers: chat)
            #expect(sent.status == 201, "\(sent.body)")
            let resent = try await gateway.request("POST", "/v1/orders/\(id)/messages", token: ann, #"{"text":"I am at the door"}"#, headers: chat)
            #expect(resent.status == 201)
            #expect(resent.body == sent.body)
            // Dan's key of the same name is his own.
            let dans = try await gateway.request("POST", "/v1/orders/\(id)/messages", token: dan, #"{"text":"On my way"}"#, headers: chat)
            #expect(dans.status == 201, "\(dans.body)")
            let messages = try await gateway.request("GET", "/v1/orders/\(id)/messages", token: ann).body["messages"]?.arrayValue ?? []
            #expect(messages.map { $0["text"] } == ["I am at the door", "On my way"], "stored once each; nothing for the refused 400")

            let cancel = key("cancel")
            let cancelled = try await gateway.request("POST", "/v1/orders/\(id)/cancel", token: ann, #"{"reason":"plans changed"}"#, headers: cancel)
            #expect(cancelled.status == 200, "\(cancelled.body)")
            #expect(cancelled.body["status"] == "CANCELLED")
            let recancelled = try await gateway.request("POST", "/v1/orders/\(id)/cancel", token: ann, #"{"reason":"plans changed"}"#, headers: cancel)
            #expect(recancelled.status == 200, "the first answer, not 409: \(recancelled.body)")
            #expect(recancelled.body == cancelled.body)
            #expect(try await gateway.request("POST", "/v1/orders/\(id)/cancel", token: ann, #"{"reason":"plans changed"}"#).status == 409, "without a key, as before")
        }
    }

    @Test func aRetriedRatingAnswersTheFirstReply() async throws {
        try await withTestBus("idempotency-rating") { bus in
            let apps = try await Apps.start(bus)
            let id = try await apps.ride()
            let rating = key("rate")
            let rated = try await apps.gateway.request("POST", "/v1/orders/\(id)/rating", token: apps.rider.token, #"{"stars":5}"#, headers: rating)
            #expect(rated.status == 200, "\(rated.body)")
            let again = try await apps.gateway.request("POST", "/v1/orders/\(id)/rating", token: apps.rider.token, #"{"stars":5}"#, headers: rating)
            #expect(again.status == 200, "the first answer, not 409: \(again.body)")
            #expect(again.body == rated.body)
            let changed = try await apps.gateway.request("POST", "/v1/orders/\(id)/rating", token: apps.rider.token, #"{"stars":1}"#, headers: rating)
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
}
