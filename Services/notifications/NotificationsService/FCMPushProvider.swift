import AsyncHTTPClient
import Foundation
import Providers
import RideModels
import Wire

/// Firebase Cloud Messaging's HTTP v1 API: `POST /v1/projects/<project>/messages:send` with an
/// OAuth 2.0 access token, which the service account's key buys from its `token_uri` (an RS256
/// assertion, RFC 7523) and which is kept until a minute before it expires.
public actor FCMPushProvider: PushProvider {
    public nonisolated let name = "fcm"
    let account: FCMServiceAccount
    let url: String
    let client: HTTPClient
    let timeout: Duration
    private var accessToken: (value: String, until: Date)?

    static let scope = "https://www.googleapis.com/auth/firebase.messaging"

    public init(account: FCMServiceAccount, url: String, client: HTTPClient, timeout: Duration) {
        self.account = account
        self.url = url
        self.client = client
        self.timeout = timeout
    }

    public func send(_ notification: UserNotification, to token: String) async -> PushOutcome {
        let bearer: String
        do {
            bearer = try await self.bearer(now: Date())
        } catch {
            return .retry("fcm access token: \(error)")
        }
        var request = HTTPClientRequest(url: url + "/v1/projects/\(account.projectID)/messages:send")
        request.method = .POST
        request.headers.add(name: "authorization", value: "Bearer " + bearer)
        request.headers.add(name: "content-type", value: "application/json; charset=utf-8")
        request.body = .bytes(Self.message(notification, token: token))
        let (outcome, status) = await PushExchange.send(request, client: client, timeout: timeout, outcome: Self.outcome)
        if status == 401 { accessToken = nil }
        return outcome
    }

    /// The access token, bought again a minute before it expires.
    func bearer(now: Date) async throws -> String {
        if let accessToken, accessToken.until > now { return accessToken.value }
        let issued = Int(now.timeIntervalSince1970)
        let assertion = try ProviderJWT.rs256(
            header: ["kid": .string(account.privateKeyID)],
            claims: [
                "iss": .string(account.clientEmail), "scope": .string(Self.scope), "aud": .string(account.tokenURI),
                "iat": .number(Double(issued)), "exp": .number(Double(issued + 3600)),
            ], key: account.key)
        var request = HTTPClientRequest(url: account.tokenURI)
        request.method = .POST
        request.headers.add(name: "content-type", value: "application/x-www-form-urlencoded")
        request.body = .bytes(Array("grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion=\(assertion)".utf8))
        let response = try await client.execute(request, timeout: .nanoseconds(Int64(timeout / .nanoseconds(1))))
        let body = try await response.body.collect(upTo: 64 * 1024)
        let answer = try? JSONCoding.decode(JSONValue.self, from: Array(body.readableBytesView))
        guard response.status.code == 200, let value = answer?["access_token"]?.stringValue else {
            throw PushCredentialError(
                description: "\(account.tokenURI) answered \(response.status.code) \(answer?["error"]?.stringValue ?? "")")
        }
        let lifetime = answer?["expires_in"]?.numberValue ?? 3600
        accessToken = (value, now.addingTimeInterval(max(lifetime - 60, 0)))
        return value
    }

    /// The message: a notification the phone shows, and data the app opens the right screen with
    /// (FCM's data values are strings).
    static func message(_ notification: UserNotification, token: String) -> [UInt8] {
        var data: [String: JSONValue] = ["notification_id": .string(notification.id), "kind": .string(notification.kind)]
        if let order = notification.orderID { data["order_id"] = .string(order) }
        let message: [String: JSONValue] = [
            "token": .string(token),
            "notification": ["title": .string(PushText.title(notification.title)), "body": .string(PushText.body(notification.body))],
            // No collapse key: FCM keeps four per phone, and each notification stands alone.
            "data": .object(data), "android": ["priority": "high"],
        ]
        return (["message": .object(message)] as [String: JSONValue]).jsonBytes
    }

    /// FCM's answer as an outcome, by the error's `FcmError` code (or its status when it has none):
    /// `UNREGISTERED`, `SENDER_ID_MISMATCH` and an `INVALID_ARGUMENT` whose field violation names
    /// `message.token` end the token (any other invalid argument is the message's fault, not the
    /// phone's: it fails alone); `QUOTA_EXCEEDED`, `UNAVAILABLE`, `INTERNAL` and a refused access
    /// token are tried again.
    static func outcome(status: Int, body: [UInt8], retryAfter: String?) -> PushOutcome {
        if status == 200 { return .sent }
        let error = (try? JSONCoding.decode(JSONValue.self, from: body))?["error"]
        let details = error?["details"]?.arrayValue ?? []
        let code = details.lazy.compactMap { $0["errorCode"]?.stringValue }.first ?? error?["status"]?.stringValue ?? "HTTP \(status)"
        let reason = "fcm \(status) \(code)"
        let fields = details.flatMap { $0["fieldViolations"]?.arrayValue ?? [] }.compactMap { $0["field"]?.stringValue }
        switch code {
        case "INVALID_ARGUMENT":
            return fields.contains("message.token")
                ? .deadToken("\(reason) message.token") : .failed("\(reason) \(fields.joined(separator: ","))")
        case "UNREGISTERED", "SENDER_ID_MISMATCH": return .deadToken(reason)
        case "QUOTA_EXCEEDED", "UNAVAILABLE", "INTERNAL", "UNAUTHENTICATED", "THIRD_PARTY_AUTH_ERROR":
            return .retry(reason, after: PushText.retryAfter(retryAfter))
        default: return status == 429 || status >= 500 ? .retry(reason, after: PushText.retryAfter(retryAfter)) : .failed(reason)
        }
    }
}
