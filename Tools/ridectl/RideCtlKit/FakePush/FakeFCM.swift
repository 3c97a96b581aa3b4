import Foundation
import Wire
import _CryptoExtras

/// Firebase Cloud Messaging's HTTP v1 API and Google's OAuth token endpoint as a service account
/// meets them: `POST /token` sells an access token for an RS256 assertion signed with the account's
/// key (`iss` its email, `aud` this endpoint, the messaging scope, an hour at most);
/// `POST /v1/projects/<project>/messages:send` takes a message with such a token; errors are
/// Google's `{"error": {code, message, status, details: [FcmError]}}`.
struct FakeFCM: Sendable {
    let publicKey: _RSA.Signing.PublicKey
    let clientEmail: String
    let projectID: String
    /// `<base>/token`, the `aud` an assertion must name.
    let tokenURI: String
    let state: FakePushState

    struct Answer: Sendable {
        var status: Int
        var body: JSONValue
    }

    func token(form: String) async -> Answer {
        var fields: [String: String] = [:]
        for pair in form.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1).map { String($0).removingPercentEncoding ?? "" }
            if parts.count == 2 { fields[parts[0]] = parts[1] }
        }
        func refuse(_ why: String) -> Answer { Answer(status: 400, body: ["error": "invalid_grant", "error_description": .string(why)]) }
        guard fields["grant_type"] == "urn:ietf:params:oauth:grant-type:jwt-bearer", let jws = fields["assertion"].flatMap(FakeJWS.init)
        else {
            return refuse("Invalid grant_type or assertion.")
        }
        guard jws.header["alg"] == "RS256",
            publicKey.isValidSignature(
                _RSA.Signing.RSASignature(rawRepresentation: jws.signature), for: Data(jws.signingInput.utf8), padding: .insecurePKCS1v1_5)
        else { return refuse("Invalid JWT Signature.") }
        let now = Date().timeIntervalSince1970
        guard jws.claims["iss"] == .string(clientEmail), jws.claims["aud"] == .string(tokenURI),
            jws.claims["scope"]?.stringValue?.split(separator: " ").contains("https://www.googleapis.com/auth/firebase.messaging") == true
        else { return refuse("Invalid JWT: iss, aud or scope.") }
        guard let issued = jws.claims["iat"]?.numberValue, let expires = jws.claims["exp"]?.numberValue, expires > now,
            expires - issued <= 3600,
            issued <= now + 60
        else { return refuse("Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe.") }
        let token = await state.sellAccessToken(lifetime: 3599)
        return Answer(status: 200, body: ["access_token": .string(token), "expires_in": 3599, "token_type": "Bearer"])
    }

    func send(project: String, authorization: String?, body: [UInt8]) async -> Answer {
        let message = (try? JSONCoding.decode(JSONValue.self, from: body))?["message"]
        let answer = await answer(project: project, authorization: authorization, message: message, size: body.count)
        await state.record([
            "service": "fcm", "token": message?["token"] ?? .null, "status": .number(Double(answer.status)), "payload": message ?? .null,
            "reason": answer.body["error"]?["details"]?[0]?["errorCode"] ?? answer.body["error"]?["status"] ?? .null,
        ])
        return answer
    }

    private func answer(project: String, authorization: String?, message: JSONValue?, size: Int) async -> Answer {
        guard let authorization, authorization.hasPrefix("Bearer "), await state.accessTokenIsValid(String(authorization.dropFirst(7)))
        else {
            return Self.error(401, "UNAUTHENTICATED", "Request had invalid authentication credentials.", code: nil)
        }
        guard project == projectID else {
            return Self.error(403, "PERMISSION_DENIED", "Permission denied on project \(project).", code: "SENDER_ID_MISMATCH")
        }
        guard let message, let token = message["token"]?.stringValue, message["notification"]?["title"]?.stringValue != nil else {
            return Self.error(400, "INVALID_ARGUMENT", "Request contains an invalid argument.", code: "INVALID_ARGUMENT", field: "message")
        }
        guard size <= 4096 else {
            return Self.error(
                400, "INVALID_ARGUMENT", "Message is too big. Max allowed payload size is 4096 bytes.", code: "INVALID_ARGUMENT",
                field: "message")
        }
        switch await state.takeAnswer(for: token) {
        case "unregistered": return Self.error(404, "NOT_FOUND", "Requested entity was not found.", code: "UNREGISTERED")
        case "bad_token":
            return Self.error(
                400, "INVALID_ARGUMENT", "The registration token is not a valid FCM registration token", code: "INVALID_ARGUMENT",
                field: "message.token")
        case "throttled":
            return Self.error(429, "RESOURCE_EXHAUSTED", "Quota exceeded for quota metric 'Send requests'.", code: "QUOTA_EXCEEDED")
        case "unavailable": return Self.error(503, "UNAVAILABLE", "The service is currently unavailable.", code: "UNAVAILABLE")
        default:
            return Answer(status: 200, body: ["name": .string("projects/\(projectID)/messages/0:\(UInt64.random(in: 1...UInt64.max))")])
        }
    }

    /// FCM's error body: a google.rpc.Status whose details carry the FcmError code and, for a bad
    /// argument, the google.rpc.BadRequest naming the field.
    static func error(_ status: Int, _ grpcStatus: String, _ message: String, code: String?, field: String? = nil) -> Answer {
        var error: [String: JSONValue] = ["code": .number(Double(status)), "message": .string(message), "status": .string(grpcStatus)]
        var details: [JSONValue] = []
        if let code { details.append(["@type": "type.googleapis.com/google.firebase.fcm.v1.FcmError", "errorCode": .string(code)]) }
        if let field {
            details.append([
                "@type": "type.googleapis.com/google.rpc.BadRequest",
                "fieldViolations": [["field": .string(field), "description": .string(message)]],
            ])
        }
        if !details.isEmpty { error["details"] = .array(details) }
        return Answer(status: status, body: ["error": .object(error)])
    }
}
