import Crypto
import Foundation
import Providers
import RideModels
import Testing
import Wire
import _CryptoExtras

@testable import NotificationsService

/// The push services' answers as outcomes, what becomes of a push after each, the tokens a phone
/// may register, and the credentials' JWTs.
@Suite struct PushRulesTests {
    static func json(_ text: String) -> [UInt8] { Array(text.utf8) }

    @Test func apnsAnswersBecomeOutcomes() {
        #expect(APNsPushProvider.outcome(status: 200, body: [], retryAfter: nil) == .sent)
        #expect(
            APNsPushProvider.outcome(status: 410, body: Self.json(#"{"reason":"Unregistered","timestamp":1}"#), retryAfter: nil)
                == .deadToken("apns 410 Unregistered"))
        #expect(
            APNsPushProvider.outcome(status: 400, body: Self.json(#"{"reason":"BadDeviceToken"}"#), retryAfter: nil)
                == .deadToken("apns 400 BadDeviceToken"))
        #expect(
            APNsPushProvider.outcome(status: 429, body: Self.json(#"{"reason":"TooManyRequests"}"#), retryAfter: "30")
                == .retry("apns 429 TooManyRequests", after: .seconds(30)))
        #expect(APNsPushProvider.outcome(status: 503, body: Self.json("not json"), retryAfter: nil) == .retry("apns 503 HTTP 503"))
        #expect(
            APNsPushProvider.outcome(status: 403, body: Self.json(#"{"reason":"ExpiredProviderToken"}"#), retryAfter: nil)
                == .retry("apns 403 ExpiredProviderToken"))
        #expect(
            APNsPushProvider.outcome(status: 413, body: Self.json(#"{"reason":"PayloadTooLarge"}"#), retryAfter: nil)
                == .failed("apns 413 PayloadTooLarge"))
    }

    @Test func fcmAnswersBecomeOutcomes() {
        func error(_ status: Int, _ grpc: String, _ code: String?, field: String? = nil) -> [UInt8] {
            let violation =
                field.map {
                    #",{"@type":"type.googleapis.com/google.rpc.BadRequest","fieldViolations":[{"field":"\#($0)","description":"d"}]}"#
                } ?? ""
            let details =
                code.map {
                    #","details":[{"@type":"type.googleapis.com/google.firebase.fcm.v1.FcmError","errorCode":"\#($0)"}\#(violation)]"#
                } ?? ""
            return Self.json(#"{"error":{"code":\#(status),"message":"m","status":"\#(grpc)"\#(details)}}"#)
        }
        #expect(FCMPushProvider.outcome(status: 200, body: Self.json(#"{"name":"projects/p/messages/1"}"#), retryAfter: nil) == .sent)
        #expect(
            FCMPushProvider.outcome(status: 404, body: error(404, "NOT_FOUND", "UNREGISTERED"), retryAfter: nil)
                == .deadToken("fcm 404 UNREGISTERED"))
        // Invalid argument ends the token only when the field FCM names is the token.
        #expect(
            FCMPushProvider.outcome(
                status: 400, body: error(400, "INVALID_ARGUMENT", "INVALID_ARGUMENT", field: "message.token"), retryAfter: nil)
                == .deadToken("fcm 400 INVALID_ARGUMENT message.token"))
        #expect(
            FCMPushProvider.outcome(
                status: 400, body: error(400, "INVALID_ARGUMENT", "INVALID_ARGUMENT", field: "message"), retryAfter: nil)
                == .failed("fcm 400 INVALID_ARGUMENT message"))
        #expect(
            FCMPushProvider.outcome(status: 429, body: error(429, "RESOURCE_EXHAUSTED", "QUOTA_EXCEEDED"), retryAfter: "7")
                == .retry("fcm 429 QUOTA_EXCEEDED", after: .seconds(7)))
        #expect(
            FCMPushProvider.outcome(status: 401, body: error(401, "UNAUTHENTICATED", nil), retryAfter: nil)
                == .retry("fcm 401 UNAUTHENTICATED"))
        #expect(FCMPushProvider.outcome(status: 502, body: [], retryAfter: nil) == .retry("fcm 502 HTTP 502"))
        #expect(
            FCMPushProvider.outcome(status: 403, body: error(403, "PERMISSION_DENIED", nil), retryAfter: nil)
                == .failed("fcm 403 PERMISSION_DENIED"))
    }

    @Test func aLongTextIsCutToItsShareOfTheMessageByItsEscapedBytes() {
        func escaped(_ text: String) -> Int { JSONValue.string(text).jsonBytes.count - 2 }
        #expect(PushText.body("Your driver is here.") == "Your driver is here.")
        let emoji = String(repeating: "🚕", count: 1000)  // 1 000 characters, 4 000 bytes
        let cut = PushText.body(emoji)
        #expect(cut.hasSuffix("…") && escaped(cut) <= 2000 && escaped(cut) > 1990 && emoji.hasPrefix(cut.dropLast()), "\(escaped(cut))")
        let controls = String(repeating: "\u{1}", count: 600)  // 6 bytes each escaped
        #expect(escaped(PushText.title(controls)) <= 250 && escaped(PushText.body(controls)) <= 2000)
        let family = String(repeating: "👨‍👩‍👧", count: 100)  // one character of 18 bytes: never split
        #expect(PushText.title(family).dropLast().allSatisfy { $0 == "👨‍👩‍👧" })
    }

    @Test func aPushIsSentRetriedBoundedlyOrEndsItsToken() {
        let delays: [Duration] = [.seconds(5), .seconds(30)]
        let sent = PushDisposition(outcome: .sent, attempts: 0, retryDelays: delays)
        #expect(sent.sent && sent.retryAfter == nil && sent.error == nil && !sent.removeToken && sent.metric == "sent")
        #expect(PushDisposition(outcome: .retry("x"), attempts: 1, retryDelays: delays).retryAfter == .seconds(30))
        #expect(
            PushDisposition(outcome: .retry("x", after: .seconds(60)), attempts: 0, retryDelays: delays).retryAfter == .seconds(60),
            "the service's wait when longer")
        let spent = PushDisposition(outcome: .retry("x"), attempts: 2, retryDelays: delays)
        #expect(spent.retryAfter == nil && spent.metric == "failed" && !spent.sent, "bounded: given up after the last delay")
        let dead = PushDisposition(outcome: .deadToken("apns 410 Unregistered"), attempts: 0, retryDelays: delays)
        #expect(dead.removeToken && dead.retryAfter == nil && dead.metric == "dead_token")
        #expect(PushDisposition(outcome: .failed("no"), attempts: 0, retryDelays: delays).retryAfter == nil)
    }

    @Test func tokensAreCheckedByTheirService() {
        #expect(PushTokenRules.problem(with: String(repeating: "0f", count: 32), platform: .apns) == nil)
        #expect(
            PushTokenRules.problem(with: String(repeating: "0f", count: 50), platform: .apns) == nil, "longer device tokens are allowed")
        for bad in ["", "xyz", String(repeating: "0g", count: 32), String(repeating: "a", count: 65)] {
            #expect(PushTokenRules.problem(with: bad, platform: .apns) != nil, "\(bad)")
        }
        #expect(PushTokenRules.problem(with: "cX9:APA91b" + String(repeating: "Ab-_", count: 30), platform: .fcm) == nil)
        for bad in ["short", "has spaces and is long enough to pass the length check", "emoji🚕" + String(repeating: "a", count: 40)] {
            #expect(PushTokenRules.problem(with: bad, platform: .fcm) != nil, "\(bad)")
        }
    }

    @Test func providerTokensVerifyWithThePublicKeys() throws {
        let ecKey = P256.Signing.PrivateKey()
        let apns = try ProviderJWT.es256(header: ["kid": "KEY1234567"], claims: ["iss": "TEAM123456", "iat": 1_790_000_000], key: ecKey)
        let parts = apns.split(separator: ".").map(String.init)
        #expect(parts.count == 3)
        #expect(try JSONCoding.decode(JSONValue.self, from: Array(Self.unbase64URL(parts[0])))["alg"] == "ES256")
        let signature = try P256.Signing.ECDSASignature(rawRepresentation: Self.unbase64URL(parts[2]))
        #expect(ecKey.publicKey.isValidSignature(signature, for: Data((parts[0] + "." + parts[1]).utf8)))

        let rsaKey = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        let assertion = try ProviderJWT.rs256(header: ["kid": "k"], claims: ["iss": "a@b"], key: rsaKey)
        let pieces = assertion.split(separator: ".").map(String.init)
        #expect(try JSONCoding.decode(JSONValue.self, from: Array(Self.unbase64URL(pieces[0])))["alg"] == "RS256")
        #expect(
            rsaKey.publicKey.isValidSignature(
                _RSA.Signing.RSASignature(rawRepresentation: Self.unbase64URL(pieces[2])), for: Data((pieces[0] + "." + pieces[1]).utf8),
                padding: .insecurePKCS1v1_5))
        #expect(
            !parts.joined().contains("=") && !parts.joined().contains("+") && !parts.joined().contains("/"), "base64url without padding")
    }

    static func unbase64URL(_ text: String) -> Data { Base64URL.decode(Substring(text)) ?? Data() }
}
