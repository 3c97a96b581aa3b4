import Bus
import Crypto
import Foundation
import Logging
import RideModels
import ServiceLifecycle
import Storage

#if canImport(FoundationNetworking)
import FoundationNetworking
import Wire
#endif

/// Where notifications go beyond the inbox: a push service (APNs, FCM) in production. The default
/// writes each push as a JSON line to a file, which is what a developer wants to look at.
public protocol PushProvider: Sendable {
    func push(_ notification: UserNotification, to tokens: [String]) async throws
}

/// `<data-dir>/push.jsonl`: one line per push, `{"tokens":[…],"notification":{…}}`.
public actor FilePushProvider: PushProvider {
    let path: String

    public init(path: String) { self.path = path }

    public func push(_ notification: UserNotification, to tokens: [String]) async throws {
        let members: [String: JSONValue] = ["tokens": .array(tokens.map(JSONValue.string)), "notification": try JSONValue(encoding: notification)]
        var line = members.jsonBytes
        line.append(0x0A)
        if !FileManager.default.fileExists(atPath: path) { FileManager.default.createFile(atPath: path, contents: nil) }
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        defer { try? handle.close() }
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(line))
    }
}

/// The signature header of a webhook delivery: `sha256=<hex HMAC-SHA256 of the body, keyed by the webhook's secret>`.
public enum WebhookSignature {
    public static let header = "X-Ride-Signature"

    public static func sign(_ body: [UInt8], secret: String) -> String {
        let mac = HMAC<SHA256>.authenticationCode(for: body, using: SymmetricKey(data: Array(secret.utf8)))
        return "sha256=" + mac.map { String(format: "%02x", $0) }.joined()
    }
}

/// Sends pending webhook deliveries: a POST of the JSON array with the signature, `timeout` to
/// answer 2xx, then retries after each of `retryDelays`, then dead (listed by `dead_letters`,
/// sent again by `replay`). Woken after each commit and every 500 ms.
public struct WebhookSender: Service {
    let store: any NotificationStorage
    let timeout: Duration
    let retryDelays: [Duration]
    let logger: Logger
    let loop = WakeupLoop()

    public init(store: any NotificationStorage, timeout: Duration, retryDelays: [Duration], logger: Logger) {
        self.store = store
        self.timeout = timeout
        self.retryDelays = retryDelays
        self.logger = logger
    }

    public func notify() { loop.notify() }

    public func run() async throws {
        await loop.run(tick: .milliseconds(500)) { await sendDue() }
    }

    /// Every due delivery, several at once (one slow receiver does not hold up the others).
    func sendDue() async {
        guard let (due, lease) = try? await store.claimDueDeliveries(now: Date(), lease: timeout + .seconds(5), limit: 100), !due.isEmpty else { return }
        await withTaskGroup(of: Void.self) { group in
            for delivery in due { group.addTask { await send(delivery, lease: lease) } }
        }
    }

    func send(_ delivery: WebhookDelivery, lease: Int64? = nil) async {
        let failure = await post(delivery)
        let retryAt = failure == nil ? nil : delivery.attempts < retryDelays.count ? Date().addingTimeInterval(Double(retryDelays[delivery.attempts].milliseconds) / 1000) : nil
        if let failure {
            logger.warning(
                "webhook delivery failed",
                metadata: [
                    "delivery": "\(delivery.id)", "url": "\(delivery.url)", "error": "\(failure)",
                    "then": "\(retryAt.map { "retry at \($0)" } ?? "dead letter")",
                ])
        }
        do {
            try await store.finishAttempt(delivery.id, lease: lease, delivered: failure == nil, error: failure, retryAt: retryAt)
        } catch {
            logger.error("cannot record a webhook attempt; it will be sent again", metadata: ["delivery": "\(delivery.id)", "error": "\(error)"])
        }
    }

    /// Nil when the receiver answered 2xx; otherwise why not.
    func post(_ delivery: WebhookDelivery) async -> String? {
        guard let url = URL(string: delivery.url) else { return "not a URL" }
        let body = Array(delivery.body.utf8)
        var request = URLRequest(url: url)
        request.httpMethod = "POST"
        request.httpBody = Data(body)
        request.timeoutInterval = Double(timeout.milliseconds) / 1000
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.setValue(WebhookSignature.sign(body, secret: delivery.secret), forHTTPHeaderField: WebhookSignature.header)
        request.setValue(String(delivery.id), forHTTPHeaderField: "X-Ride-Delivery")
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = request.timeoutInterval
        let session = URLSession(configuration: configuration)
        defer { session.finishTasksAndInvalidate() }
        do {
            let (_, response) = try await session.data(for: request)
            let status = (response as? HTTPURLResponse)?.statusCode ?? 0
            return (200..<300).contains(status) ? nil : "HTTP \(status)"
        } catch {
            return error.localizedDescription
        }
    }
}
