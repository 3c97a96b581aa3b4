import Bus
import Foundation
import RideModels
import Storage
import Wire

/// What the notifications service keeps: one protocol, a SQLite store (`NotificationStore`, the
/// default) and a PostgreSQL one (`PostgresNotificationStore`, when `RIDE_DATABASE_URL` is set,
/// shared by instances). Both pass the same storage test suite.
public protocol NotificationStorage: ReactorCursors {
    /// The outbox of `notification.<user>` and `device.command.<device>` events, for the relay and the `events` op.
    var eventLog: any EventLog { get }
    /// Where keyed requests are remembered (`OpRouter.requests`).
    var requestLog: any RequestLog { get }

    /// Stores what one event makes, in one transaction: the notifications not stored before
    /// (each with its `notification.<user>` event), the device commands, and one delivery per
    /// webhook. Returns the notifications that are new (for push). The same event recorded again,
    /// or by two instances at once, adds nothing.
    func record(
        eventID: String, notifications: [UserNotification], commands: [AddressedDeviceCommand], webhookBody: [UInt8]?,
        rider: (order: String, rider: String)?
    ) async throws -> [UserNotification]
    /// The rider of an order (as `record` kept it), for the trip events that name only the order.
    func rider(of orderID: String) async throws -> String?
    /// A user's inbox, newest first.
    func inbox(userID: String, limit: Int) async throws -> [UserNotification]
    /// Keeps a phone's push token and its platform for `userID`; a token kept before is kept once,
    /// with the platform given last, and a token another user had moves to this one (the phone is
    /// signed in as them now).
    func addPushToken(userID: String, token: String, platform: PushPlatform) async throws
    func pushTokens(userID: String) async throws -> [String]

    /// The outbox of pushes (one per new notification and token of its user, added by `record` in
    /// its transaction): those due, claimed for `lease` as deliveries are.
    func claimDuePushes(now: Date, lease: Duration, limit: Int) async throws -> (pushes: [PendingPush], leaseEnd: Int64)
    /// Forgets a token its push service no longer knows, whoever had it; its pending pushes die with `reason`.
    func removePushToken(_ token: String, reason: String) async throws
    /// The pushes of a user's notifications, newest first (the operator's view of what was sent).
    func pushes(userID: String, limit: Int) async throws -> [PendingPush]

    func addWebhook(_ webhook: Webhook) async throws
    /// Every webhook, oldest first.
    func webhooks() async throws -> [Webhook]
    /// Removes a webhook and its pending deliveries; false when there was none.
    func deleteWebhook(id: String) async throws -> Bool
    /// A webhook's new secret; the one it replaces signs too until `previousUntil` (a previous one
    /// before it no longer does). Nil when there is no such webhook.
    func rotateSecret(webhookID: String, secret: String, previousUntil: Date) async throws -> Webhook?
    /// Ends a rotation: the previous secret no longer signs. Nil when there is no such webhook.
    func dropPreviousSecret(webhookID: String) async throws -> Webhook?

    /// Pending deliveries whose time has come, oldest first — claimed for `lease`: their next
    /// attempt moves to the lease's end (returned) in the same transaction, so another instance
    /// on the same database does not send them too; if this one dies mid-send, they are due again
    /// when the lease ends (at least once, as webhooks are).
    func claimDueDeliveries(now: Date, lease: Duration, limit: Int) async throws -> (deliveries: [WebhookDelivery], leaseEnd: Int64)
    /// An attempt of a leased row (a delivery, a push) recorded while the lease is still this
    /// attempt's (`finishAttempt`, `finishPush`).
    func finishLeased(_ table: LeasedTable, _ id: Int64, lease: Int64?, status: String, error: String?, retryAt: Date?) async throws
    /// Dead deliveries, newest first.
    func deadLetters(limit: Int) async throws -> [WebhookDelivery]
    /// A dead delivery goes back to pending, attempts from zero; false when it is not dead.
    func replay(deliveryID: Int64) async throws -> Bool
    func delivery(id: Int64) async throws -> WebhookDelivery?
}

/// The outboxes whose rows are claimed for a lease and then finished (`finishLeased`).
public enum LeasedTable: String, Sendable {
    case pushes, deliveries
}

extension NotificationStorage {
    /// Records a push's attempt: sent, retried at `retryAt`, or dead when `retryAt` is nil — only
    /// while the claim is still this attempt's (as `finishAttempt`).
    public func finishPush(_ id: Int64, lease: Int64?, sent: Bool, error: String?, retryAt: Date?) async throws {
        try await finishLeased(
            .pushes, id, lease: lease, status: NotificationRows.pushStatus(sent: sent, retryAt: retryAt), error: error, retryAt: retryAt)
    }

    /// Records an attempt: delivered, retried at `retryAt`, or dead when `retryAt` is nil — only
    /// while the claim (`lease`, the claim's `leaseEnd`) is still this attempt's: an attempt that
    /// outlived its lease, while another instance sent the delivery again, changes nothing.
    /// A nil `lease` records the attempt whatever the claim.
    public func finishAttempt(_ id: Int64, lease: Int64?, delivered: Bool, error: String?, retryAt: Date?) async throws {
        try await finishLeased(
            .deliveries, id, lease: lease, status: NotificationRows.status(delivered: delivered, retryAt: retryAt), error: error,
            retryAt: retryAt)
    }
}

/// One push in the outbox: a notification on its way to one phone.
public struct PendingPush: Sendable, Equatable {
    public var id: Int64
    public var notification: UserNotification
    public var token: String
    public var platform: PushPlatform
    /// `pending`, `sent` or `dead`.
    public var status: String
    public var attempts: Int
    public var lastError: String?
}

/// What both stores share of their tables: the rules a row follows, and how a row reads back.
enum NotificationRows {
    /// Commands only with something new: a replayed event must not restart a phone's tracking.
    static func commands(
        _ commands: [AddressedDeviceCommand], forNotifications notifications: [UserNotification], added: [UserNotification]
    )
        -> [AddressedDeviceCommand]
    {
        !added.isEmpty || notifications.isEmpty ? commands : []
    }

    /// A delivery's columns, in the order of `DeliveryColumns`, with its webhook's (`d` the delivery, `w` the webhook).
    static let deliveryColumns =
        "d.id, d.webhook_id, w.url, d.event_id, d.status, d.attempts, d.last_error, d.body, w.secret, w.previous_secret, w.previous_secret_until_ms"
    /// A delivery and its webhook.
    static let deliveriesWithWebhooks = "deliveries d JOIN webhooks w ON w.id = d.webhook_id"
    /// id, webhook_id, url, event_id, status, attempts, last_error, body, secret, previous_secret, previous_secret_until_ms.
    typealias DeliveryColumns = (Int64, String, String, String, String, Int, String?, Data, String, String?, Int64?)

    static func delivery(_ row: DeliveryColumns) -> WebhookDelivery {
        WebhookDelivery(
            id: row.0, webhookID: row.1, url: row.2, eventID: row.3, status: row.4, attempts: row.5, lastError: row.6,
            body: String(decoding: row.7, as: UTF8.self), secret: row.8, previousSecret: previousUntil(row.9, row.10) == nil ? nil : row.9)
    }

    static let webhookColumns = "id, url, secret, created_at_ms, previous_secret, previous_secret_until_ms"

    static func webhook(id: String, url: String, secret: String, createdAtMS: Int64, previousSecret: String?, previousUntilMS: Int64?)
        -> Webhook
    {
        Webhook(
            id: id, url: url, secret: secret, createdAt: Date(timeIntervalSince1970: Double(createdAtMS) / 1000),
            previousSecretExpiresAt: previousUntil(previousSecret, previousUntilMS))
    }

    /// Until when a previous secret signs: nil when there is none or its time is over (an
    /// expired one stays in its row until the next rotation or drop; it is only never used).
    static func previousUntil(_ secret: String?, _ untilMS: Int64?, now: Date = Date()) -> Date? {
        guard secret != nil, let untilMS, untilMS > milliseconds(now) else { return nil }
        return Date(timeIntervalSince1970: Double(untilMS) / 1000)
    }

    /// The schema of the push outbox (v5): the platform of each token, and one row per push.
    static let pushesSQL = """
        ALTER TABLE push_tokens ADD COLUMN platform TEXT NOT NULL DEFAULT 'fcm';
        CREATE INDEX push_tokens_by_token ON push_tokens (token);
        CREATE TABLE pushes (
            id INTEGER PRIMARY KEY,
            notification_id TEXT NOT NULL,
            user_id TEXT NOT NULL,
            token TEXT NOT NULL,
            platform TEXT NOT NULL,
            document TEXT NOT NULL,
            status TEXT NOT NULL,          -- pending, sent, dead
            attempts INTEGER NOT NULL DEFAULT 0,
            next_attempt_ms INTEGER NOT NULL,
            last_error TEXT,
            created_at_ms INTEGER NOT NULL,
            UNIQUE (notification_id, token)
        );
        CREATE INDEX pushes_due ON pushes (status, next_attempt_ms);
        CREATE INDEX pushes_by_user ON pushes (user_id, id);
        """

    static let pushColumns = "id, document, token, platform, status, attempts, last_error"
    /// A push is claimed only when it is its phone's oldest pending one: a phone's pushes arrive in
    /// order (one waiting for a retry holds the later ones back), and no two instances, nor two
    /// claims of one, send to the same phone at once, so one send fits in the lease.
    static let firstOfItsToken =
        "NOT EXISTS (SELECT 1 FROM pushes AS earlier WHERE earlier.token = pushes.token AND earlier.status = 'pending' AND earlier.id < pushes.id)"
    /// id, document, token, platform, status, attempts, last_error.
    typealias PushColumns = (Int64, String, String, String, String, Int, String?)

    static func push(_ row: PushColumns) throws -> PendingPush {
        PendingPush(
            id: row.0, notification: try JSONCoding.decode(UserNotification.self, fromText: row.1), token: row.2,
            platform: PushPlatform(rawValue: row.3) ?? .fcm, status: row.4, attempts: row.5, lastError: row.6)
    }

    /// A push's status after an attempt.
    static func pushStatus(sent: Bool, retryAt: Date?) -> String { sent ? "sent" : retryAt == nil ? "dead" : "pending" }

    /// A delivery's status after an attempt.
    static func status(delivered: Bool, retryAt: Date?) -> String { delivered ? "delivered" : retryAt == nil ? "dead" : "pending" }

    static func milliseconds(_ date: Date) -> Int64 { Int64((date.timeIntervalSince1970 * 1000).rounded()) }
}
