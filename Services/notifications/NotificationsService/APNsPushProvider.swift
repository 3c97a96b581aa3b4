import AsyncHTTPClient
import Crypto
import Foundation
import Providers
import RideModels
import Wire

/// Apple's push service: `POST /3/device/<token>` over HTTP/2 (the pooled client negotiates it by
/// ALPN), authorised by a provider token — an ES256 JWT of the team's `.p8` key, made again every
/// 50 minutes (APNs refuses one older than an hour, and one remade more often than every 20).
public actor APNsPushProvider: PushProvider {
    public nonisolated let name = "apns"
    let configuration: APNsConfiguration
    let client: HTTPClient
    let timeout: Duration
    private var providerToken: (value: String, madeAt: Date)?

    static let tokenLifetime: TimeInterval = 50 * 60

    public init(configuration: APNsConfiguration, client: HTTPClient, timeout: Duration) {
        self.configuration = configuration
        self.client = client
        self.timeout = timeout
    }

    public func send(_ notification: UserNotification, to token: String) async -> PushOutcome {
        let now = Date()
        var request = HTTPClientRequest(url: configuration.url + "/3/device/" + token)
        request.method = .POST
        do {
            request.headers.add(name: "authorization", value: "bearer " + (try bearer(now: now)))
        } catch {
            return .failed("cannot sign the provider token: \(error)")
        }
        request.headers.add(name: "apns-topic", value: configuration.topic)
        request.headers.add(name: "apns-push-type", value: "alert")
        request.headers.add(name: "apns-priority", value: "10")
        request.headers.add(name: "apns-expiration", value: "\(Int(now.timeIntervalSince1970) + 86_400)")
        request.headers.add(name: "apns-collapse-id", value: String(notification.id.utf8.prefix(64)) ?? notification.id)
        request.headers.add(name: "content-type", value: "application/json")
        request.body = .bytes(Self.payload(notification))
        let (outcome, _) = await PushExchange.send(request, client: client, timeout: timeout, outcome: Self.outcome)
        if case .retry(let reason, _) = outcome, reason.contains("ExpiredProviderToken") { providerToken = nil }
        return outcome
    }

    func bearer(now: Date) throws -> String {
        if let providerToken, now.timeIntervalSince(providerToken.madeAt) < Self.tokenLifetime { return providerToken.value }
        let value = try ProviderJWT.es256(
            header: ["kid": .string(configuration.keyID)],
            claims: ["iss": .string(configuration.teamID), "iat": .number(Double(Int(now.timeIntervalSince1970)))],
            key: configuration.key)
        providerToken = (value, now)
        return value
    }

    /// The alert as APNs shows it, and what the app needs to open the right screen.
    static func payload(_ notification: UserNotification) -> [UInt8] {
        var aps: [String: JSONValue] = [
            "alert": ["title": .string(PushText.title(notification.title)), "body": .string(PushText.body(notification.body))],
            "sound": "default",
        ]
        if let order = notification.orderID { aps["thread-id"] = .string(order) }
        var payload: [String: JSONValue] = [
            "aps": .object(aps), "notification_id": .string(notification.id), "kind": .string(notification.kind),
        ]
        if let order = notification.orderID { payload["order_id"] = .string(order) }
        return payload.jsonBytes
    }

    /// APNs's answer as an outcome: 200 sent; `BadDeviceToken`, `DeviceTokenNotForTopic` and 410
    /// `Unregistered` end the token; 429 and 5xx, and an expired provider token, are tried again.
    static func outcome(status: Int, body: [UInt8], retryAfter: String?) -> PushOutcome {
        if status == 200 { return .sent }
        let reason = (try? JSONCoding.decode(JSONValue.self, from: body))?["reason"]?.stringValue ?? "HTTP \(status)"
        switch (status, reason) {
        case (410, _), (400, "BadDeviceToken"), (400, "DeviceTokenNotForTopic"): return .deadToken("apns \(status) \(reason)")
        case (429, _), (500...599, _), (403, "ExpiredProviderToken"), (403, "InvalidProviderToken"):
            return .retry("apns \(status) \(reason)", after: PushText.retryAfter(retryAfter))
        default: return .failed("apns \(status) \(reason)")
        }
    }
}

/// What both push services share of a message.
enum PushText {
    /// Both services cap a message at 4 KB of JSON: the title and the body are cut to their share
    /// of it, measured as the bytes they take escaped in JSON (an emoji is 4, a control character
    /// 6), at a character boundary; the whole message is in the inbox.
    static func title(_ text: String) -> String { cut(text, toJSONBytes: 250) }
    static func body(_ text: String) -> String { cut(text, toJSONBytes: 2000) }

    static func cut(_ text: String, toJSONBytes limit: Int) -> String {
        func escaped(_ part: String) -> Int { JSONValue.string(part).jsonBytes.count - 2 }
        guard escaped(text) > limit else { return text }
        var kept = ""
        var used = escaped("…")
        for character in text {
            let size = escaped(String(character))
            guard used + size <= limit else { break }
            kept.append(character)
            used += size
        }
        return kept + "…"
    }

    /// `Retry-After` in seconds (the HTTP-date form is not used by either service).
    static func retryAfter(_ header: String?) -> Duration? {
        header.flatMap { Int($0.trimmingCharacters(in: .whitespaces)) }.map { .seconds(min(max($0, 0), 3600)) }
    }
}
