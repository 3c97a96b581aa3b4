import Bus
import Foundation
import Logging
import Providers
import RideModels
import Synchronization
import Wire

/// The events Stripe posts to the webhook endpoint, checked before anything is stored: the
/// `Stripe-Signature` must sign the exact body with the endpoint secret within 5 minutes (older is
/// a replay; 401), the body must be an event of a type taken here. Each event id is taken once; the
/// same event again (Stripe retries until it gets a 2xx) is answered 200 `duplicate`.
struct StripeWebhooks: Sendable {
    /// The types taken; Stripe sends only those the endpoint subscribes to (docs/payments.md).
    static let types: Set<String> = ["payment_intent.succeeded", "payment_intent.payment_failed", "account.updated"]

    let secret: String
    let ids: any StripeRecords
    let logger: Logger
    let rejections = RefusalGate()

    func receive(_ params: ProviderWebhookParams, now: Date = Date()) async throws -> ProviderWebhookReceipt {
        do throws(StripeSignature.Failure) {
            try StripeSignature.verify(body: Array(params.payload.utf8), header: params.signature, secret: secret, now: now)
        } catch {
            // Unauthenticated: the signature is the provider's credential.
            throw refused(error == .mismatch || error == .malformed ? "bad_signature" : "stale_signature", "\(error)", status: 401)
        }
        guard let event = try? JSONCoding.decode(JSONValue.self, fromText: params.payload), event["object"] == "event",
            let id = event["id"]?.stringValue, let type = event["type"]?.stringValue, let object = event["data"]?["object"]
        else { throw refused("invalid_event", "the body is not a Stripe event (object \"event\" with id, type and data.object)") }
        guard Self.types.contains(type) else {
            throw refused(
                "unknown_event_type", "event type \(type.prefix(80)) is not taken (only \(Self.types.sorted().joined(separator: ", ")))")
        }
        let objectID = object["id"]?.stringValue ?? ""
        let detail = Self.detail(type: type, object: object)
        let taken = try await ids.recordEvent(id: id, type: type, objectID: objectID, detail: detail)
        if taken {
            var level = Logger.Level.info
            if type == "payment_intent.payment_failed" { level = .warning }
            logger.log(
                level: level, "payment provider event",
                metadata: ["event": "\(id)", "type": "\(type)", "object": "\(objectID)", "detail": "\(detail)"])
        }
        return ProviderWebhookReceipt(eventID: id, type: type, duplicate: !taken)
    }

    /// What an event says, briefly, as stored: the order of a PaymentIntent and why it failed; whether an account is paid out.
    static func detail(type: String, object: JSONValue) -> String {
        switch type {
        case "account.updated": "payouts_enabled=\(object["payouts_enabled"] == .bool(true))"
        default:
            "order_id=\(object["metadata"]?["order_id"]?.stringValue ?? "")"
                + (object["last_payment_error"]?["message"]?.stringValue.map { " error=\($0.prefix(200))" } ?? "")
        }
    }

    /// A 400 (401 for the signature) naming what is wrong, logged at most once a minute per reason
    /// (a sender retrying, or someone probing, cannot fill the log).
    func refused(_ code: String, _ message: String, status: Int = 400) -> ServiceError {
        if rejections.admit(code) {
            logger.warning("payment provider webhook refused", metadata: ["reason": "\(code)", "message": "\(message)"])
        }
        return ServiceError(status: status, code: code, message: message)
    }
}

/// At most one log line per reason and minute.
final class RefusalGate: Sendable {
    private let last = Mutex<[String: ContinuousClock.Instant]>([:])

    func admit(_ reason: String, now: ContinuousClock.Instant = .now) -> Bool {
        last.withLock { last in
            if let previous = last[reason], now - previous < .seconds(60) { return false }
            last[reason] = now
            return true
        }
    }
}
