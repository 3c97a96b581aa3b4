import Bus
import Foundation
import Logging
import Providers
import RideModels
import Testing

@testable import OrdersService

/// Stripe's events at orders: taken once when signed and fresh; forged, replayed, malformed or
/// unknown ones refused with a 401 or 400 naming why, and nothing stored.
@Suite struct StripeWebhooksTests {
    static let secret = "whsec_unit"

    static func webhooks() throws -> StripeWebhooks {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("stripe-\(UUID().uuidString).sqlite").path
        return StripeWebhooks(secret: secret, ids: try StripeIDs(path: path), logger: Logger(label: "test"))
    }

    static func event(_ id: String, _ type: String) -> String {
        #"{"id":"\#(id)","object":"event","type":"\#(type)","data":{"object":{"id":"pi_1","object":"payment_intent","metadata":{"order_id":"o-1"}}}}"#
    }

    static func signed(_ payload: String, secret: String = secret, at time: Date = Date()) -> ProviderWebhookParams {
        ProviderWebhookParams(
            payload: payload,
            signature: StripeSignature.header(body: Array(payload.utf8), secret: secret, timestamp: Int(time.timeIntervalSince1970)))
    }

    func refusal(_ webhooks: StripeWebhooks, _ params: ProviderWebhookParams) async -> ServiceError? {
        do {
            _ = try await webhooks.receive(params)
            return nil
        } catch {
            return error as? ServiceError
        }
    }

    @Test func aSignedEventIsTakenOnceAndItsRedeliveryIsADuplicate() async throws {
        let webhooks = try Self.webhooks()
        let first = try await webhooks.receive(Self.signed(Self.event("evt_1", "payment_intent.succeeded")))
        #expect(first == ProviderWebhookReceipt(eventID: "evt_1", type: "payment_intent.succeeded", duplicate: false))
        let again = try await webhooks.receive(Self.signed(Self.event("evt_1", "payment_intent.succeeded")))
        #expect(again.duplicate, "Stripe delivers an event until it is answered 2xx: the second is acknowledged, not taken again")
        #expect(try await webhooks.ids.latestEvent(type: "payment_intent.succeeded", objectID: "pi_1") == "order_id=o-1")
    }

    @Test func forgedReplayedMalformedAndUnknownEventsAreRefusedAndNothingIsStored() async throws {
        let webhooks = try Self.webhooks()
        let cases: [(ProviderWebhookParams, Int, String)] = [
            (Self.signed(Self.event("evt_f", "payment_intent.succeeded"), secret: "whsec_forger"), 401, "bad_signature"),
            (
                ProviderWebhookParams(payload: Self.event("evt_m", "payment_intent.succeeded"), signature: "sha256=abc"), 401,
                "bad_signature"
            ),
            (Self.signed(Self.event("evt_r", "payment_intent.succeeded"), at: Date().addingTimeInterval(-600)), 401, "stale_signature"),
            (Self.signed(#"{"id":"evt_x","object":"charge"}"#), 400, "invalid_event"),
            (Self.signed("not json"), 400, "invalid_event"),
            (Self.signed(Self.event("evt_u", "customer.deleted")), 400, "unknown_event_type"),
        ]
        for (params, status, code) in cases {
            let error = await refusal(webhooks, params)
            #expect(error?.status == status && error?.code == code, "\(params.payload.prefix(60)): \(String(describing: error))")
        }
        #expect(try await webhooks.ids.latestEvent(type: "payment_intent.succeeded", objectID: "pi_1") == nil, "nothing stored")
        #expect(webhooks.rejections.admit("bad_signature") == false, "the second bad signature within a minute was not logged again")
    }
}
