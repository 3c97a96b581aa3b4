import Crypto
import Foundation
import Wire

/// Apple's push service as a provider meets it: `POST /3/device/<token>`, a provider token (ES256
/// JWT: `kid` the key's id, `iss` the team, `iat` within the hour) checked against the key's public
/// half, the topic, the payload; its error answers (`{"reason": …}`) as Apple documents them.
struct FakeAPNs: Sendable {
    let publicKey: P256.Signing.PublicKey
    let keyID: String
    let teamID: String
    let topic: String
    let state: FakePushState

    struct Answer: Sendable {
        var status: Int
        var reason: String?
        var headers: [String: String] = [:]
    }

    func handle(token: String, headers: [String: String], body: [UInt8]) async -> Answer {
        let answer = await answer(token: token, headers: headers, body: body)
        var record: [String: JSONValue] = [
            "service": "apns", "token": .string(token), "status": .number(Double(answer.status)),
            "topic": .string(headers["apns-topic"] ?? ""),
            "push_type": .string(headers["apns-push-type"] ?? ""), "payload": (try? JSONCoding.decode(JSONValue.self, from: body)) ?? .null,
        ]
        if let reason = answer.reason { record["reason"] = .string(reason) }
        await state.record(.object(record))
        return answer
    }

    private func answer(token: String, headers: [String: String], body: [UInt8]) async -> Answer {
        if let refusal = credentialProblem(headers["authorization"]) { return Answer(status: 403, reason: refusal) }
        guard headers["apns-topic"] == topic else {
            return Answer(status: 400, reason: headers["apns-topic"] == nil ? "MissingTopic" : "TopicDisallowed")
        }
        guard token.count == 64, token.allSatisfy(\.isHexDigit) else { return Answer(status: 400, reason: "BadDeviceToken") }
        guard body.count <= 4096 else { return Answer(status: 413, reason: "PayloadTooLarge") }
        guard let payload = try? JSONCoding.decode(JSONValue.self, from: body), payload["aps"]?.objectValue != nil else {
            return Answer(status: 400, reason: "PayloadEmpty")
        }
        switch await state.takeAnswer(for: token) {
        case "unregistered": return Answer(status: 410, reason: "Unregistered")
        case "bad_token": return Answer(status: 400, reason: "BadDeviceToken")
        case "throttled": return Answer(status: 429, reason: "TooManyRequests")
        case "unavailable": return Answer(status: 503, reason: "ServiceUnavailable")
        default: return Answer(status: 200, headers: ["apns-id": UUID().uuidString])
        }
    }

    /// Nil when the bearer is a provider token of this key and team, made within the hour.
    func credentialProblem(_ authorization: String?) -> String? {
        guard let authorization, authorization.lowercased().hasPrefix("bearer "), let jws = FakeJWS(String(authorization.dropFirst(7)))
        else {
            return "MissingProviderToken"
        }
        guard jws.header["alg"] == "ES256", jws.header["kid"] == .string(keyID), jws.claims["iss"] == .string(teamID),
            let signature = try? P256.Signing.ECDSASignature(rawRepresentation: jws.signature),
            publicKey.isValidSignature(signature, for: Data(jws.signingInput.utf8))
        else { return "InvalidProviderToken" }
        guard let issued = jws.claims["iat"]?.numberValue, Date().timeIntervalSince1970 - issued < 3600 else {
            return "ExpiredProviderToken"
        }
        return nil
    }
}
