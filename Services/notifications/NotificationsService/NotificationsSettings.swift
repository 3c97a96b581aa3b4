import ArgumentParser
import Bus
import Foundation
import Providers
import RideContract
import ServiceKit
import ServiceStorage
import SettingsKit
import Storage

/// `ride-notifications`' flags. Each has an environment variable; a flag wins over its variable.
public struct RideNotificationsCommand: ServiceCommand {
    /// What `--data-dir` holds.
    public enum Files: DataFiles {
        public static let description = "notifications.sqlite (unless --database-url) and push.jsonl"
    }

    public static let configuration = CommandConfiguration(
        commandName: "ride-notifications",
        abstract: "Notifications: inboxes, push, device commands and signed webhooks from order and trip events.",
        discussion: """
            Follows every order.status.* and trip.* event (catching up through the sources' events op \
            after a restart or a gap) and turns them into notifications for riders and drivers \
            (stored per user, published on notification.<user_id>, pushed from an outbox with retries \
            to APNs and FCM when their credentials are given, otherwise as lines in <data-dir>/push.jsonl; \
            a token the service no longer knows is removed), device.command.<device_id> \
            start_tracking/stop_tracking for drivers' phones, and deliveries to the operator's \
            webhooks: a JSON array of HyperTrack-style events, signed by the Standard Webhooks \
            convention (webhook-id, webhook-timestamp, webhook-signature: v1,HMAC-SHA256 of \
            id.timestamp.body with the webhook's secret, and the previous one during a rotation), \
            retried under the same webhook-id, then dead letters; one pooled HTTP client for them all. \
            \(RideContract.helpSummary(of: BusContract.Service.notifications)) State is kept in \
            <data-dir>/notifications.sqlite, or with --database-url in the notifications schema of \
            a PostgreSQL database that several instances share. --http defaults to \(RideProcess.notifications.httpDefault).

            \(ExitCodes.help(opening: "the database"))
            """,
        version: PlatformVersion.current
    )

    public static let busRole: HeldRole? = Roles.notifications.held
    typealias Keys = NotificationsSettingKeys

    @OptionGroup var bus: BusClientOptions

    @OptionGroup var dataDirectory: DataDirectoryOptions<Files>

    @OptionGroup var database: DatabaseOptions

    @Option(name: Keys.secretFile.name, help: Keys.secretFile.help) var secretFile: String?
    @Option(name: Keys.webhookTimeout.name, help: Keys.webhookTimeout.help) var webhookTimeout: Int?
    @Option(name: Keys.webhookRetries.name, help: Keys.webhookRetries.help) var webhookRetries: String?

    @OptionGroup var push: PushOptions

    @OptionGroup var workers: WorkerOptions

    @OptionGroup public var common: CommonOptions

    public init() {}

    public static func serve(_ settings: NotificationsSettings) async throws {
        try await NotificationsServer(settings: settings).run()
    }

    public func settings() throws -> NotificationsSettings {
        let retries = Keys.webhookRetries.resolve(webhookRetries)
        let dataDirectory = dataDirectory.resolved()
        return NotificationsSettings(
            basics: try ServiceBasics(.notifications, bus: bus, common: common),
            dataDirectory: dataDirectory,
            database: try database.location(
                sqlitePath: URL(fileURLWithPath: dataDirectory).appendingPathComponent("notifications.sqlite").path),
            secretFile: Keys.secretFile.resolve(
                secretFile, default: URL(fileURLWithPath: dataDirectory).appendingPathComponent("notifications.key").path
            ).value,
            webhookTimeout: .seconds(try Keys.webhookTimeout.value(webhookTimeout)),
            webhookRetries: try DelayList.parse((retries.value, retries.origin), what: "webhook retries"),
            push: try push.settings(),
            concurrency: try workers.resolved()
        )
    }
}

/// `ride-notifications`' own settings, each declared once: the flags and the values come from here.
enum NotificationsSettingKeys {
    static let secretFile = SettingKey(
        "secret-file", env: "RIDE_NOTIFICATIONS_SECRET_FILE", default: "<data-dir>/notifications.key",
        "File holding the key that seals webhook secrets and keyed replies at rest (made, 32 random bytes, when missing; replicas share it)"
    )
    static let webhookTimeout = IntegerSettingKey(
        "webhook-timeout-s", env: "RIDE_WEBHOOK_TIMEOUT_S", default: 10, range: 1...120, "Seconds a webhook receiver has to answer 2xx")
    static let webhookRetries = SettingKey(
        "webhook-retries", env: "RIDE_WEBHOOK_RETRIES", default: "1,5,20",
        "Seconds before each retry of a failed delivery, comma-separated; then it is dead")
}

/// `ride-notifications`' resolved configuration.
public struct NotificationsSettings: StoredServiceSettings {
    public var basics: ServiceBasics
    public var dataDirectory: String
    public var database: StorageLocation
    /// The key that seals webhook secrets and keyed replies.
    public var secretFile: String
    public var secrets: [SecretSetting] { database.secrets + [KeyFile.given(secretFile, name: "notifications key")].compactMap { $0 } }
    public var webhookTimeout: Duration
    public var webhookRetries: [Duration]
    public var push: PushSettings
    public var concurrency: Int

    public var pushLogPath: String { URL(fileURLWithPath: dataDirectory).appendingPathComponent("push.jsonl").path }

    public var summary: String {
        basics.summary(
            of: .notifications,
            [
                "database": "\(database)",
                "push": "\(push.summary); the rest to \(pushLogPath)",
                "key": secretFile,
                "webhooks": "timeout \(webhookTimeout), retries after \(webhookRetries.map { "\($0)" }.joined(separator: ", "))",
                "concurrency": "\(concurrency)",
            ])
    }
}
