import AsyncHTTPClient
import Foundation
import Logging
import RideModels
import ServiceLifecycle
import Storage

/// Sends pending webhook deliveries: a POST of the JSON array with the Standard Webhooks headers,
/// `timeout` to answer 2xx, then retries after each of `retryDelays`, then dead (listed by
/// `dead_letters`, sent again by `replay`). Woken after each commit and every 500 ms.
public struct WebhookSender: Service {
    let store: any NotificationStorage
    /// One pool of connections for every delivery; its owner shuts it down after this stops.
    let client: HTTPClient
    let timeout: Duration
    let retryDelays: [Duration]
    let logger: Logger
    /// Opens the secrets the deliveries carry as the table keeps them.
    let secrets: WebhookSecretSealing
    let loop = WakeupLoop()

    /// What is read of a receiver's answer: its status matters, not its body.
    static let answerLimit = 64 * 1024

    public init(
        store: any NotificationStorage, client: HTTPClient, timeout: Duration, retryDelays: [Duration], secrets: WebhookSecretSealing,
        logger: Logger
    ) {
        self.store = store
        self.secrets = secrets
        self.client = client
        self.timeout = timeout
        self.retryDelays = retryDelays
        self.logger = logger
    }

    /// The pooled client deliveries go through: no redirects (a receiver's answer is its own),
    /// connections kept for the next delivery to the same receiver.
    public static func makeClient(timeout: Duration) -> HTTPClient {
        var configuration = HTTPClient.Configuration(redirectConfiguration: .disallow)
        configuration.timeout = .init(
            connect: .nanoseconds(Int64(timeout / .nanoseconds(1))), read: .nanoseconds(Int64(timeout / .nanoseconds(1))))
        return HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }

    public func notify() { loop.notify() }

    public func run() async throws {
        await loop.run(tick: .milliseconds(500)) { await sendDue() }
    }

    /// Every due delivery, several at once (one slow receiver does not hold up the others).
    func sendDue() async {
        guard let (due, lease) = try? await store.claimDueDeliveries(now: Date(), lease: timeout + .seconds(5), limit: 100), !due.isEmpty
        else { return }
        await withTaskGroup(of: Void.self) { group in
            for delivery in due { group.addTask { await send(delivery, lease: lease) } }
        }
    }

    func send(_ delivery: WebhookDelivery, lease: Int64? = nil) async {
        let failure = await post(delivery)
        let retryAt =
            failure == nil
            ? nil
            : delivery.attempts < retryDelays.count
                ? Date().addingTimeInterval(Double(retryDelays[delivery.attempts].milliseconds) / 1000) : nil
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
            logger.error(
                "cannot record a webhook attempt; it will be sent again", metadata: ["delivery": "\(delivery.id)", "error": "\(error)"])
        }
    }

    /// The `webhook-id` of a delivery: its row's, so every attempt and replay of it carries the same.
    static func messageID(_ delivery: WebhookDelivery) -> String { "msg_\(delivery.webhookID)_\(delivery.id)" }

    /// Nil when the receiver answered 2xx; otherwise why not.
    func post(_ delivery: WebhookDelivery, now: Date = Date()) async -> String? {
        let body = Array(delivery.body.utf8)
        var request = HTTPClientRequest(url: delivery.url)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        let secrets: [String]
        do {
            secrets = try ([delivery.secret] + (delivery.previousSecret.map { [$0] } ?? [])).map(self.secrets.open)
        } catch {
            return "\(error)"
        }
        for header in StandardWebhook.headers(
            id: Self.messageID(delivery), timestamp: Int64(now.timeIntervalSince1970), body: body, secrets: secrets)
        {
            request.headers.add(name: header.name, value: header.value)
        }
        request.body = .bytes(body)
        do {
            let response = try await client.execute(request, timeout: .nanoseconds(Int64(timeout / .nanoseconds(1))))
            // Read (and dropped) so the connection goes back to the pool; a longer answer only closes it.
            _ = try? await response.body.collect(upTo: Self.answerLimit)
            return (200..<300).contains(Int(response.status.code)) ? nil : "HTTP \(response.status.code)"
        } catch {
            return "\(error)"
        }
    }
}
