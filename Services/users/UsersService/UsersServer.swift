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
        let host = ServiceHost(.users, settings: settings)
        let logger = host.logger
        let storage = try await ServiceStorage<any UserStorage>.open(
            for: host, settings, sqlite: { try UserStore(path: $0) }, postgres: { try await PostgresUserStore.open(url: $0, logger: $1) },
            eventLog: \.eventLog)
        let (store, publisher, relay) = (storage.store, storage.publisher, storage.relay)
        let (secret, previous): ([UInt8], [UInt8]?)
        do {
            (secret, previous) = (try settings.loadSecret(), try settings.loadPreviousSecret())
        } catch {
            throw exitWithError(
                "cannot read or make the token key \(settings.tokenSecretFile): \(error)", program: host.program, code: ExitCodes.software)
        }
        let signer = await TokenSigner(secret: secret, previous: previous, lifetime: settings.tokenLifetime)
        var router = UsersOps.router(
            store: store, hasher: PasswordHasher(rounds: settings.passwordRounds),
            sessions: SessionOps(
                store: store, signer: signer, deviceKeys: DeviceCredentialKeys(secret: secret, previous: previous),
                refreshLifetime: settings.refreshLifetime), relay: relay,
            instance: host.instance, reauthentication: Reauthentication(window: settings.reauthenticationWindow),
            keepReplacedPhotos: settings.replacedPhotoRetention, approval: settings.driverApproval)
        router.requests = store.requestLog
        // Log-ins, refreshes and new passwords are keyed requests: their hashes and replies (tokens,
        // device credentials) are sealed under a key of the token key's, never kept readable.
        router.sealing = RequestSealing(secret: secret)
        // And replayed only long enough for a lost reply's retry: a refresh's key sent again later
        // runs again, as a reuse of the rotated token, and never hands over the session's pair.
        router.replayWindows = Dictionary(uniqueKeysWithValues: UsersOps.credentialOps.map { ($0, settings.credentialReplay) })
        let worker = host.worker(broker: settings.broker, router: router, concurrency: settings.concurrency)
        let platform = try await host.client(broker: settings.broker)
        // Every topic of orders, so a sequence gap is a missed event, not one not subscribed to.
        let ordersEvents = try await EventSubscriber<RatingsReactor.OrdersEvent>(
            endpoint: settings.sub, prefixes: [Events.orderRoot], options: .platform, logger: logger)
        host.needsBus([ordersEvents], at: settings.sub)
        host.needsDatabase(relay)
        let ratings = RatingsReactor.make(store: store, platform: platform, subscriber: ordersEvents, logger: logger)
        let users = host.metrics.gauge(RideMetric.users)
        host.metrics.onScrape { users.set(Double(store.count)) }
        // Stopped in reverse: health, then requests; the relay sends what they appended; then the publisher.
        let publishing = ShutdownHook {
            await platform.close()
            await publisher.close()
            logger.info("users stopped")
        }
        let sweep = ApprovalSweep(store: store, relay: relay, interval: settings.documentCheck, logger: logger)
        try await host.run(
            [publishing, relay, ratings, sweep, worker], ready: ["broker": "\(settings.broker)", "database": "\(settings.database)"]
        ) {
            host.health(["users": .number(Double(store.count))])
        }
    }
}
