import Foundation
import RideModels
import Testing
import Wire

@testable import NotificationsService

/// The signer against vectors made by the reference verifier (`standardwebhooks` on PyPI,
/// `Webhook(secret).sign(msg_id, timestamp, body)`), pinned here.
@Suite struct StandardWebhookTests {
    @Test func theConventionsOwnVectorSigns() {
        // The example of the Standard Webhooks specification, which the reference library reproduces.
        let signature = StandardWebhook.signature(
            id: "msg_p5jXN8AQM9LWM0D4loKWxJek", timestamp: 1_614_265_330, body: Array(#"{"test": 2432232314}"#.utf8),
            secrets: ["whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"])
        #expect(signature == "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=")
    }

    @Test func aDeliveryIsSignedWithEverySecretOfARotation() {
        let body = Array(#"[{"type":"order","data":{"value":"NEW"}}]"#.utf8)
        let current = "whsec_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8="
        // A secret registered without the prefix: its key is its bytes (the reference gets it as `whsec_` + their base64).
        let previous = "a-webhook-secret-of-some-length"
        let headers = StandardWebhook.headers(id: "msg_wh-1_7", timestamp: 1_764_072_000, body: body, secrets: [current, previous])
        #expect(headers.map(\.name) == ["webhook-id", "webhook-timestamp", "webhook-signature"])
        #expect(headers.map(\.value)[0...1] == ["msg_wh-1_7", "1764072000"])
        #expect(headers[2].value == "v1,mZM5B4sCrkVmz2vjoJ1dGioBMur0QwTDLVPimV3NSII= v1,FiiTfPYotUZot75ytlsbzTsUXMy/JNpdBQQAvHS6a+M=")
    }

    @Test func aNewSecretIsAWhsecKeyOf32Bytes() {
        let secret = StandardWebhook.newSecret()
        #expect(secret.hasPrefix("whsec_"))
        #expect(StandardWebhook.key(of: secret).count == 32)
        #expect(StandardWebhook.problem(with: secret) == nil)
        #expect(StandardWebhook.newSecret() != secret)
    }

    @Test func keysWithOrWithoutPaddingAndRawSecrets() {
        #expect(
            StandardWebhook.key(of: "whsec_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8") == Array(0..<32),
            "unpadded, as the reference accepts")
        #expect(StandardWebhook.key(of: "Jefe") == Array("Jefe".utf8))
        #expect(StandardWebhook.key(of: "whsec_!!!") == Array("whsec_!!!".utf8), "not base64: its bytes, never a crash")
    }

    @Test(arguments: [
        "whsec_", "whsec_!!!!", "whsec_AAEC", "short", String(repeating: "x", count: 300), "whsec_" + String(repeating: "A", count: 200),
    ])
    func malformedSecretsAreRefused(secret: String) {
        #expect(StandardWebhook.problem(with: secret) != nil)
    }

    @Test func theWebhookIDIsTheDeliverysOnEveryAttempt() {
        var delivery = WebhookDelivery(
            id: 7, webhookID: "wh-1", url: "http://127.0.0.1:1/hook", eventID: "orders/3", status: "pending", attempts: 0, lastError: nil,
            body: "[]",
            secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
        let first = WebhookSender.messageID(delivery)
        delivery.attempts = 2
        #expect(WebhookSender.messageID(delivery) == first)
        #expect(first == "msg_wh-1_7")
    }

    @Test func aDeliverysSecretsAreNeverOnTheWire() throws {
        let delivery = WebhookDelivery(
            id: 7, webhookID: "wh-1", url: "http://127.0.0.1:1/hook", eventID: "orders/3", status: "dead", attempts: 3,
            lastError: "HTTP 401", body: "[]",
            secret: "whsec_current", previousSecret: "whsec_previous")
        let text = try JSONCoding.encodeText(delivery)
        #expect(!text.contains("whsec_") && !text.contains("secret"), "\(text)")
    }
}
