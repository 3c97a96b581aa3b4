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
        let logger = RideLogging.bootstrap(label: "ride-notifications", format: settings.logFormat, level: settings.logLevel)
        let metrics = ServiceMetrics.bootstrap()
        let storage = try await ServiceStorage<any NotificationStorage>.open(
            program: "ride-notifications", source: BusContract.Service.notifications, location: settings.database, publishTo: settings.pub, logger: logger,
            sqlite: { try NotificationStore(path: $0) }, postgres: { try await PostgresNotificationStore.open(url: $0, logger: logger) },
            eventLog: \.eventLog)
        let (store, publisher, relay) = (storage.store, storage.publisher, storage.relay)
        let platform = try await ServiceClient(broker: settings.broker, logger: logger)
        let sender = WebhookSender(store: store, timeout: settings.webhookTimeout, retryDelays: settings.webhookRetries, logger: logger)
        // Every topic of both sources, so a sequence gap is a missed event, not one not subscribed to.
        let events = try await EventSubscriber<JSONValue>(endpoint: settings.sub, prefixes: [Events.orderRoot, Events.tripRoot], logger: logger)
        let reactor = NotificationsReactor(store: store, relay: relay, sender: sender, push: FilePushProvider(path: settings.pushLogPath), logger: logger)
            .make(platform: platform, subscriber: events)
        let instance = UUID().uuidString.lowercased()
        let startedAt = Date()
        var workerOptions = MDPWorker.Options()
        workerOptions.concurrency = settings.concurrency
        let worker = ServiceWorker(
            broker: settings.broker, router: NotificationsOps(store: store, sender: sender).router(instance: instance),
            options: workerOptions, logger: logger)
        let status = StatusServer.make(
            address: settings.http, serviceName: "ride-notifications", metrics: metrics, logger: logger,
            onRunning: { port in
                logger.info("notifications ready", metadata: ["broker": "\(settings.broker)", "http": "\(settings.http.host):\(port)", "database": "\(settings.database)"])
            }
        ) {
            HealthReport(status: .ok, service: "notifications", instance: instance, uptimeSeconds: Date().timeIntervalSince(startedAt), details: [:])
        }
        let closing = ShutdownHook {
            await platform.close()
            await publisher.close()
            logger.info("notifications stopped")
        }
        do {
            try await ServiceRunner.run([closing, relay, sender, reactor, worker, status], logger: logger)
        } catch  where isAddressInUse(error) {
            throw exitWithError("cannot listen on HTTP address \(settings.http) (--http): Address already in use", program: "ride-notifications", code: ExitCodes.unavailable)
        }
    }
}
