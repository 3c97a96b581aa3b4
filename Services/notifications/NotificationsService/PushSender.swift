import Foundation
import Logging
import RideModels
import ServiceLifecycle
import Storage

/// Sends the push outbox: each due push to its token's service (the file when that platform has
/// none), then, by the outcome, done, again after the next of `retryDelays` (or the service's
/// `Retry-After`, if longer), or dead — and a token the service no longer knows is removed.
/// Woken after each commit and every 500 ms; a push claimed by an instance that dies is due again
/// when its lease ends, so none is lost to a restart.
public struct PushSender: Service {
    let store: any NotificationStorage
    let providers: PushProviders
    let retryDelays: [Duration]
    /// How long a claimed push is this instance's: a provider's timeout and some.
    let lease: Duration
    let logger: Logger
    /// Counts an attempt by platform and outcome (`ride_notifications_pushes_total`).
    let count: @Sendable (_ platform: String, _ outcome: String) -> Void
    let loop = WakeupLoop()

    public init(
        store: any NotificationStorage, providers: PushProviders, retryDelays: [Duration], lease: Duration, logger: Logger,
        count: @escaping @Sendable (String, String) -> Void = { _, _ in }
    ) {
        (self.store, self.providers, self.retryDelays, self.lease, self.logger, self.count) = (
            store, providers, retryDelays, lease, logger, count
        )
    }

    public func notify() { loop.notify() }

    public func run() async throws {
        await loop.run(tick: .milliseconds(500)) { await sendDue() }
    }

    /// Every due push, the phones at once: a claim holds each phone's oldest pending push only
    /// (its pushes arrive in order, one at a time), so the next claim follows as soon as a round
    /// is done, until nothing is due.
    func sendDue() async {
        while !Task.isShuttingDownGracefully, let (due, leaseEnd) = try? await store.claimDuePushes(now: Date(), lease: lease, limit: 100),
            !due.isEmpty
        {
            await withTaskGroup(of: Void.self) { group in
                for push in due { group.addTask { await send(push, lease: leaseEnd) } }
            }
        }
    }

    /// False when the push's token was found dead (its other pending pushes died with it).
    @discardableResult
    func send(_ push: PendingPush, lease: Int64?) async -> Bool {
        let provider = providers.provider(for: push.platform)
        let outcome = await provider.send(push.notification, to: push.token)
        let next = PushDisposition(outcome: outcome, attempts: push.attempts, retryDelays: retryDelays)
        count(provider.name, next.metric)
        if let error = next.error {
            logger.warning(
                "push not sent",
                metadata: [
                    "push": "\(push.id)", "user_id": "\(push.notification.userID)", "platform": "\(provider.name)", "error": "\(error)",
                    "then": "\(next.removeToken ? "token removed" : next.retryAfter.map { "retry in \($0)" } ?? "given up")",
                ])
        }
        do {
            try await store.finishPush(
                push.id, lease: lease, sent: next.sent, error: next.error,
                retryAt: next.retryAfter.map { Date().addingTimeInterval(Double($0.milliseconds) / 1000) })
            if next.removeToken { try await store.removePushToken(push.token, reason: next.error ?? "token removed") }
        } catch {
            logger.error("cannot record a push attempt; it will be sent again", metadata: ["push": "\(push.id)", "error": "\(error)"])
        }
        return !next.removeToken
    }
}

/// The provider of each platform; a platform without one goes to the file.
public struct PushProviders: Sendable {
    public var apns: (any PushProvider)?
    public var fcm: (any PushProvider)?
    public var file: any PushProvider

    public init(apns: (any PushProvider)? = nil, fcm: (any PushProvider)? = nil, file: any PushProvider) {
        (self.apns, self.fcm, self.file) = (apns, fcm, file)
    }

    func provider(for platform: PushPlatform) -> any PushProvider {
        switch platform {
        case .apns: apns ?? file
        case .fcm: fcm ?? file
        }
    }
}

/// What becomes of a push after an attempt: pure, so each outcome's rule is tested alone.
struct PushDisposition: Equatable {
    var sent = false
    /// Nil: not tried again (sent, or dead).
    var retryAfter: Duration?
    var removeToken = false
    var error: String?
    /// The `outcome` label: `sent`, `retry`, `dead_token`, `failed`.
    var metric: String

    init(outcome: PushOutcome, attempts: Int, retryDelays: [Duration]) {
        switch outcome {
        case .sent:
            (sent, metric) = (true, "sent")
        case .retry(let reason, let after):
            error = reason
            if attempts < retryDelays.count {
                retryAfter = max(retryDelays[attempts], after ?? .zero)
                metric = "retry"
            } else {
                metric = "failed"
            }
        case .deadToken(let reason):
            (error, removeToken, metric) = (reason, true, "dead_token")
        case .failed(let reason):
            (error, metric) = (reason, "failed")
        }
    }
}
