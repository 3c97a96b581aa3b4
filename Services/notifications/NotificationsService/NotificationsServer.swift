import Bus
import Foundation
import Logging
import RideContract
import RideModels
import ServiceKit
import ServiceStorage
import Storage
import Wire

/// The running notifications service.
public struct NotificationsServer: Sendable {
    public let settings: NotificationsSettings

    public init(settings: NotificationsSettings) { self.settings = settings }

    public func run() async throws {
        let settings = self.settings
        let host = ServiceHost(.notifications, settings: settings)
        let logger = host.logger
        let storage = try await ServiceStorage<any NotificationStorage>.open(
            for: host, settings, sqlite: { try NotificationStore(path: $0) },
            postgres: { try await PostgresNotificationStore.open(url: $0, logger: $1) }, eventLog: \.eventLog)
        let (store, publisher, relay) = (storage.store, storage.publisher, storage.relay)
        let platform = try await host.client(broker: settings.broker)
        // Every topic of both sources, so a sequence gap is a missed event, not one not subscribed to.
        let events = try await EventSubscriber<JSONValue>(
            endpoint: settings.sub, prefixes: [Events.orderRoot, Events.tripRoot], options: .platform, logger: logger)
        host.needsBus([events], at: settings.sub)
        host.needsDatabase(relay)
        // Made after the last step that can fail: a client must be shut down before it goes.
        let key: [UInt8]
        do {
            key = try KeyFile.loadOrCreate(settings.secretFile, what: "notifications key")
        } catch {
            throw exitWithError(
                "cannot read or make the notifications key \(settings.secretFile): \(error)", program: host.program,
                code: ExitCodes.software)
        }
        let secrets = WebhookSecretSealing(secret: key)
        let webhookClient = WebhookSender.makeClient(timeout: settings.webhookTimeout)
        let sender = WebhookSender(
            store: store, client: webhookClient, timeout: settings.webhookTimeout, retryDelays: settings.webhookRetries, secrets: secrets,
            logger: logger)
        let pushClient = try PushClient.make(settings.push)
        let counters = PushCounters(metrics: host.metrics)
        let pushes = PushSender(
            store: store,
            providers: PushClient.providers(settings.push, client: pushClient, file: FilePushProvider(path: settings.pushLogPath)),
            retryDelays: settings.push.retries, lease: settings.push.timeout * 2 + .seconds(5), logger: logger, count: counters.count)
        let reactor = NotificationsReactor(store: store, relay: relay, sender: sender, pushes: pushes, logger: logger)
            .make(platform: platform, subscriber: events)
        var router = NotificationsOps(store: store, sender: sender, secrets: secrets).router(instance: host.instance)
        router.requests = store.requestLog
        // A keyed register_webhook's or rotation's reply holds the secret: sealed in the requests table too.
        router.sealing = RequestSealing(secret: key)
        let worker = host.worker(broker: settings.broker, router: router, concurrency: settings.concurrency)
        // First in the group, so stopped last: after the senders, whose deliveries use the clients.
        let closing = ShutdownHook {
            try? await webhookClient.shutdown()
            try? await pushClient.shutdown()
            await platform.close()
            await publisher.close()
            logger.info("notifications stopped")
        }
        try await host.run(
            [closing, relay, sender, pushes, reactor, worker], ready: ["broker": "\(settings.broker)", "database": "\(settings.database)"]
        ) {
            host.health([:])
        }
    }
}
