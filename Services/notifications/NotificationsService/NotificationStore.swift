import Bus
import Foundation
import GRDB
import RideContract
import RideModels
import Storage
import Wire

/// Notifications in one SQLite file: each user's inbox, push tokens, the operator's webhooks and
/// their deliveries (pending, delivered, dead), the riders of open orders, the reactor's cursors,
/// and the outbox of `notification.<user>` and `device.command.<device>` events.
public final class NotificationStore: NotificationStorage, SQLiteServiceStore, DatabaseReactorCursors {
    public let database: DatabasePool

    public init(path: String) throws {
        database = try ServiceDatabase.open(path: path, migrations: Self.migrations, outbox: true)
    }

    /// The schema, one migration per version (the outbox table comes with the first); PostgreSQL's is translated from it.
    static let migrations: [ServiceDatabase.Migration] = [
        (
            "v1",
            """
            CREATE TABLE notifications (
                id TEXT PRIMARY KEY NOT NULL,
                user_id TEXT NOT NULL,
                created_at_ms INTEGER NOT NULL,
                document TEXT NOT NULL
            );
            CREATE INDEX notifications_by_user ON notifications (user_id, created_at_ms);
            CREATE TABLE push_tokens (user_id TEXT NOT NULL, token TEXT NOT NULL, PRIMARY KEY (user_id, token)) WITHOUT ROWID;
            CREATE TABLE webhooks (id TEXT PRIMARY KEY NOT NULL, url TEXT NOT NULL, secret TEXT NOT NULL, created_at_ms INTEGER NOT NULL);
            CREATE TABLE deliveries (
                id INTEGER PRIMARY KEY,
                webhook_id TEXT NOT NULL,
                event_id TEXT NOT NULL,
                body BLOB NOT NULL,
                status TEXT NOT NULL,          -- pending, delivered, dead
                attempts INTEGER NOT NULL DEFAULT 0,
                next_attempt_ms INTEGER NOT NULL,
                last_error TEXT,
                created_at_ms INTEGER NOT NULL,
                UNIQUE (webhook_id, event_id)
            );
            CREATE INDEX deliveries_due ON deliveries (status, next_attempt_ms);
            CREATE TABLE order_riders (order_id TEXT PRIMARY KEY NOT NULL, rider_id TEXT NOT NULL) WITHOUT ROWID;
            \(ReactorCursorTable.sql)
            """
        ),
        // The keyed requests answered (idempotency keys), kept 24 hours.
        ("v2", RequestTable.sql),
        ("v3", Outbox.traceColumnsSQL),
        // Secret rotation: the secret before the last rotation, and until when it signs too.
        (
            "v4",
            """
            ALTER TABLE webhooks ADD COLUMN previous_secret TEXT;
            ALTER TABLE webhooks ADD COLUMN previous_secret_until_ms INTEGER;
            """
        ),
        ("v5", NotificationRows.pushesSQL),
        // A phone's pushes go one at a time, oldest first: its first pending one is found by token.
        ("v6", "CREATE INDEX pushes_by_token ON pushes (token, status, id);"),
    ]

    public func record(
        eventID: String, notifications: [UserNotification], commands: [AddressedDeviceCommand], webhookBody: [UInt8]?,
        rider: (order: String, rider: String)?
    ) async throws -> [UserNotification] {
        try await database.tracedWrite { db in
            var added: [UserNotification] = []
            for notification in notifications {
                try db.run(
                    "INSERT OR IGNORE INTO notifications (id, user_id, created_at_ms, document) VALUES (?, ?, ?, ?)",
                    [
                        notification.id, notification.userID, NotificationRows.milliseconds(notification.createdAt),
                        try JSONCoding.encodeText(notification),
                    ])
                guard db.changesCount > 0 else { continue }
                try Outbox.append(
                    db, Events.notification, key: notification.userID, data: notification)
                let now = NotificationRows.milliseconds(Date())
                try db.run(
                    """
                    INSERT OR IGNORE INTO pushes (notification_id, user_id, token, platform, document, status, next_attempt_ms, created_at_ms)
                    SELECT ?, user_id, token, platform, ?, 'pending', ?, ? FROM push_tokens WHERE user_id = ?
                    """, [notification.id, try JSONCoding.encodeText(notification), now, now, notification.userID])
                added.append(notification)
            }
            for command in NotificationRows.commands(commands, forNotifications: notifications, added: added) {
                try Outbox.append(db, Events.deviceCommand, key: command.deviceID, data: command.event)
            }
            if let webhookBody {
                let now = NotificationRows.milliseconds(Date())
                try db.run(
                    """
                    INSERT OR IGNORE INTO deliveries (webhook_id, event_id, body, status, next_attempt_ms, created_at_ms)
                    SELECT id, ?, ?, 'pending', ?, ? FROM webhooks
                    """, [eventID, Data(webhookBody), now, now])
            }
            if let rider {
                try db.run("INSERT OR IGNORE INTO order_riders (order_id, rider_id) VALUES (?, ?)", [rider.order, rider.rider])
            }
            return added
        }
    }

    public func rider(of orderID: String) async throws -> String? {
        try await database.read { db in try db.value(String.self, "SELECT rider_id FROM order_riders WHERE order_id = ?", [orderID]) }
    }

    public func inbox(userID: String, limit: Int) async throws -> [UserNotification] {
        try await database.read { db in
            try String.fetchAll(
                db.cachedStatement(sql: "SELECT document FROM notifications WHERE user_id = ? ORDER BY created_at_ms DESC, id LIMIT ?"),
                arguments: [userID, limit]
            ).map { try JSONCoding.decode(UserNotification.self, fromText: $0) }
        }
    }

    public func addPushToken(userID: String, token: String, platform: PushPlatform) async throws {
        try await database.write { db in
            try db.run("DELETE FROM push_tokens WHERE token = ? AND user_id <> ?", [token, userID])
            // The phone is someone else's now: what was queued for its last user is not sent to it.
            try db.run(
                "UPDATE pushes SET status = 'dead', last_error = 'token moved' WHERE token = ? AND user_id <> ? AND status = 'pending'",
                [token, userID])
            try db.run(
                "INSERT INTO push_tokens (user_id, token, platform) VALUES (?, ?, ?) ON CONFLICT (user_id, token) DO UPDATE SET platform = excluded.platform",
                [userID, token, platform.rawValue])
        }
    }

    public func pushTokens(userID: String) async throws -> [String] {
        try await database.read { db in
            try String.fetchAll(db.cachedStatement(sql: "SELECT token FROM push_tokens WHERE user_id = ?"), arguments: [userID])
        }
    }

    // MARK: Webhooks

    public func addWebhook(_ webhook: Webhook) async throws {
        try await database.write { db in
            try db.run(
                "INSERT INTO webhooks (id, url, secret, created_at_ms) VALUES (?, ?, ?, ?)",
                [webhook.id, webhook.url, webhook.secret, NotificationRows.milliseconds(webhook.createdAt)])
        }
    }

    public func webhooks() async throws -> [Webhook] {
        try await database.read { db in
            try Row.fetchAll(db.cachedStatement(sql: "SELECT \(NotificationRows.webhookColumns) FROM webhooks ORDER BY created_at_ms")).map(
                Self.webhook)
        }
    }

    public func rotateSecret(webhookID: String, secret: String, previousUntil: Date) async throws -> Webhook? {
        try await database.write { db in
            try db.run(
                "UPDATE webhooks SET previous_secret = secret, secret = ?, previous_secret_until_ms = ? WHERE id = ?",
                [secret, NotificationRows.milliseconds(previousUntil), webhookID])
            return try Self.webhook(db, id: webhookID)
        }
    }

    public func dropPreviousSecret(webhookID: String) async throws -> Webhook? {
        try await database.write { db in
            try db.run("UPDATE webhooks SET previous_secret = NULL, previous_secret_until_ms = NULL WHERE id = ?", [webhookID])
            return try Self.webhook(db, id: webhookID)
        }
    }

    private static func webhook(_ db: Database, id: String) throws -> Webhook? {
        try Row.fetchOne(db.cachedStatement(sql: "SELECT \(NotificationRows.webhookColumns) FROM webhooks WHERE id = ?"), arguments: [id])
            .map(webhook)
    }

    private static func webhook(_ row: Row) -> Webhook {
        NotificationRows.webhook(
            id: row[0], url: row[1], secret: row[2], createdAtMS: row[3], previousSecret: row[4], previousUntilMS: row[5])
    }

    public func deleteWebhook(id: String) async throws -> Bool {
        try await database.write { db in
            try db.run("DELETE FROM webhooks WHERE id = ?", [id])
            let removed = db.changesCount > 0
            try db.run("DELETE FROM deliveries WHERE webhook_id = ? AND status = 'pending'", [id])
            return removed
        }
    }

    public func claimDueDeliveries(now: Date, lease: Duration, limit: Int) async throws -> (deliveries: [WebhookDelivery], leaseEnd: Int64)
    {
        try await database.write { db in
            // One writer at a time: what this transaction reads as due, no other claim reads until it commits.
            let due = try Self.deliveries(
                db,
                sql: """
                    SELECT \(NotificationRows.deliveryColumns) FROM \(NotificationRows.deliveriesWithWebhooks)
                    WHERE d.status = 'pending' AND d.next_attempt_ms <= ? ORDER BY d.next_attempt_ms, d.id LIMIT ?
                    """, arguments: [NotificationRows.milliseconds(now), limit])
            let until = NotificationRows.milliseconds(now) + Int64(lease.milliseconds)
            for delivery in due { try db.run("UPDATE deliveries SET next_attempt_ms = ? WHERE id = ?", [until, delivery.id]) }
            return (due, until)
        }
    }

    public func finishLeased(_ table: LeasedTable, _ id: Int64, lease: Int64?, status: String, error: String?, retryAt: Date?) async throws
    {
        try await database.write { db in
            try db.run(
                "UPDATE \(table.rawValue) SET status = ?, attempts = attempts + 1, last_error = ?, next_attempt_ms = ? "
                    + "WHERE id = ? AND (? IS NULL OR (status = 'pending' AND next_attempt_ms = ?))",
                [status, error, retryAt.map(NotificationRows.milliseconds) ?? 0, id, lease, lease])
        }
    }

    public func deadLetters(limit: Int) async throws -> [WebhookDelivery] {
        try await database.read { db in
            try Self.deliveries(
                db,
                sql: """
                    SELECT \(NotificationRows.deliveryColumns) FROM \(NotificationRows.deliveriesWithWebhooks)
                    WHERE d.status = 'dead' ORDER BY d.id DESC LIMIT ?
                    """, arguments: [limit])
        }
    }

    public func replay(deliveryID: Int64) async throws -> Bool {
        try await database.write { db in
            try db.run(
                "UPDATE deliveries SET status = 'pending', attempts = 0, next_attempt_ms = ?, last_error = NULL WHERE id = ? AND status = 'dead'",
                [NotificationRows.milliseconds(Date()), deliveryID])
            return db.changesCount > 0
        }
    }

    public func delivery(id: Int64) async throws -> WebhookDelivery? {
        try await database.read { db in
            try Self.deliveries(
                db, sql: "SELECT \(NotificationRows.deliveryColumns) FROM \(NotificationRows.deliveriesWithWebhooks) WHERE d.id = ?",
                arguments: [id]
            ).first
        }
    }

    private static func deliveries(_ db: Database, sql: String, arguments: StatementArguments) throws -> [WebhookDelivery] {
        try Row.fetchAll(db.cachedStatement(sql: sql), arguments: arguments).map { row in
            NotificationRows.delivery((row[0], row[1], row[2], row[3], row[4], row[5], row[6], row[7], row[8], row[9], row[10]))
        }
    }
}
