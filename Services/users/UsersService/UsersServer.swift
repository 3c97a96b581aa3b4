import Bus
import Foundation
import Logging
import RideContract
import ServiceKit
import ServiceStorage
import Storage

/// The running users service.
public struct UsersServer: Sendable {
    public let settings: UsersSettings

    public init(settings: UsersSettings) { self.settings = settings }

    public func run() async throws {
        let logger = RideLogging.bootstrap(label: "ride-users", format: settings.logFormat, level: settings.logLevel)
        let metrics = ServiceMetrics.bootstrap()
        let storage = try await ServiceStorage<any UserStorage>.open(
            program: "ride-users", source: BusContract.Service.users, location: settings.database, publishTo: settings.pub, logger: logger,
            sqlite: { try UserStore(path: $0) }, postgres: { try await PostgresUserStore.open(url: $0, logger: logger) }, eventLog: \.eventLog)
        let (store, publisher, relay) = (storage.store, storage.publisher, storage.relay)
        let secret: [UInt8]
        do {
            secret = try settings.loadSecret()
        } catch {
            throw exitWithError("cannot read or make the token key \(settings.tokenSecretFile): \(error)", program: "ride-users", code: ExitCodes.software)
        }
        let instance = UUID().uuidString.lowercased()
        let startedAt = Date()
        var workerOptions = MDPWorker.Options()
        workerOptions.concurrency = settings.concurrency
        let router = UsersOps.router(
            store: store, hasher: PasswordHasher(rounds: settings.passwordRounds),
            signer: TokenSigner(secret: secret, lifetime: settings.tokenLifetime), relay: relay, instance: instance)
        let worker = ServiceWorker(broker: settings.broker, router: router, options: workerOptions, logger: logger)
        let platform = try await ServiceClient(broker: settings.broker, logger: logger)
        // Every topic of orders, so a sequence gap is a missed event, not one not subscribed to.
        let ordersEvents = try await EventSubscriber<RatingsReactor.OrdersEvent>(endpoint: settings.sub, prefixes: [Events.orderRoot], logger: logger)
        let ratings = RatingsReactor.make(store: store, platform: platform, subscriber: ordersEvents, logger: logger)
        let users = metrics.gauge("ride_users_users", "Users registered.")
        metrics.onScrape { users.set(Double(store.count)) }
        let settings = self.settings
        let status = StatusServer.make(
            address: settings.http, serviceName: "ride-users", metrics: metrics, logger: logger,
            onRunning: { port in
                logger.info("users ready", metadata: ["broker": "\(settings.broker)", "http": "\(settings.http.host):\(port)", "database": "\(settings.database)"])
            }
        ) {
            HealthReport(
                status: .ok, service: "users", instance: instance, uptimeSeconds: Date().timeIntervalSince(startedAt),
                details: [
                    "users": .number(Double(store.count))
                ])
        }
        // Stopped in reverse: health, then requests; the relay sends what they appended; then the publisher.
        let publishing = ShutdownHook {
            await platform.close()
            await publisher.close()
            logger.info("users stopped")
        }
        do {
            try await ServiceRunner.run([publishing, relay, ratings, worker, status], logger: logger)
        } catch  where isAddressInUse(error) {
            throw exitWithError("cannot listen on HTTP address \(settings.http) (--http): Address already in use", program: "ride-users", code: ExitCodes.unavailable)
        }
    }
}
