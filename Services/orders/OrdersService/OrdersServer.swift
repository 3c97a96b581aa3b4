import AsyncHTTPClient
import Bus
import Cities
import Foundation
import Logging
import RideContract
import RideModels
import RoadServers
import Roads
import ServiceKit
import ServiceStorage
import Storage

/// The running orders service.
public struct OrdersServer: Sendable {
    public let settings: OrdersSettings

    public init(settings: OrdersSettings) { self.settings = settings }

    public func run() async throws {
        let host = ServiceHost(.orders, settings: settings)
        let logger = host.logger
        let storage = try await ServiceStorage<any OrderStorage>.open(
            for: host, settings, sqlite: { try OrderStore(path: $0) }, postgres: { try await PostgresOrderStore.open(url: $0, logger: $1) },
            eventLog: \.eventLog)
        let (store, publisher, relay) = (storage.store, storage.publisher, storage.relay)
        let platform = try await host.client(broker: settings.broker)
        let (provider, stripeHTTP) = try await Self.paymentProvider(settings, program: host.program, logger: logger)
        let payments = PaymentCapture(store: store, provider: provider, commissionPercent: settings.commissionPercent, relay: relay)
        var ops = OrdersOps(
            store: store, platform: platform, relay: relay, dispatch: settings.dispatch, fares: settings.fares, surge: settings.surge,
            payments: payments, logger: logger)
        let (completed, cancelled) = (host.metrics.counter(RideMetric.ridesCompleted), host.metrics.counter(RideMetric.ridesCancelled))
        ops.ended = { status in status == .completed ? completed.increment() : cancelled.increment() }
        ops.shareLifetime = settings.shareLifetime
        ops.offScript = settings.offScript
        ops.roads = try settings.routes.makeProvider(embedded: { [city = settings.city] in try city.load().routes }, logger: logger)
        // Every topic of both sources (not just the arrivals of `trips`): only then is a sequence
        // gap a missed event rather than one not subscribed to.
        let statusEvents = try await EventSubscriber<LifecycleEvent>(
            endpoint: settings.sub, prefixes: [Events.orderRoot, Events.tripRoot], options: .platform, logger: logger)
        let reactor = OrdersReactor.make(
            reactions: OrderReactions(store: store, platform: platform, relay: relay, payments: payments, logger: logger),
            ops: ops, store: store, platform: platform, subscriber: statusEvents, latency: ReactionLatency(metrics: host.metrics),
            logger: logger)
        let deviceStatuses = try await EventSubscriber<DeviceStatusEvent>(
            endpoint: settings.sub, prefixes: [Events.deviceStatus.topic], options: .platform, logger: logger)
        host.needsBus([statusEvents, deviceStatuses], at: settings.sub)
        host.needsDatabase(relay)
        let expired = host.metrics.counter(RideMetric.noDriverFound)
        var router = ops.router(instance: host.instance)
        router.requests = store.requestLog
        let worker = host.worker(broker: settings.broker, router: router, concurrency: settings.concurrency)
        let settings = self.settings
        // Stopped in reverse: health, then requests; the relay sends what they appended; then the sockets.
        let closing = ShutdownHook {
            await platform.close()
            await publisher.close()
            try? await stripeHTTP?.shutdown()
            logger.info("orders stopped")
        }
        try await host.run(
            [
                closing, relay, reactor, DispatchRounds(ops: ops, logger: logger, expired: { expired.increment() }),
                DeviceStatusWatcher(ops: ops, subscriber: deviceStatuses, logger: logger), worker,
            ],
            ready: ["broker": "\(settings.broker)", "database": "\(settings.database)"]
        ) {
            host.health([:])
        }
    }

    /// The configured provider, and the HTTP client to shut down when it is Stripe's.
    static func paymentProvider(_ settings: OrdersSettings, program: String, logger: Logger) async throws -> (
        any PaymentProvider, HTTPClient?
    ) {
        do {
            switch (settings.payments, settings.database) {
            case (.stripe(let stripe), let database):
                let http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: .init(redirectConfiguration: .disallow))
                let client = StripeClient(base: stripe.apiBase, secretKey: stripe.secretKey, http: http)
                let (secret, returnURL) = (stripe.webhookSecret, stripe.onboardingReturnURL)
                switch database {
                case .sqlite:
                    return (
                        try StripePaymentProvider(
                            client: client, idsPath: settings.stripeIDsPath, webhookSecret: secret, onboardingReturnURL: returnURL,
                            logger: logger), http
                    )
                case .postgres(let url):
                    return (
                        try await StripePaymentProvider.onPostgres(
                            client: client, url: url, webhookSecret: secret, onboardingReturnURL: returnURL, logger: logger), http
                    )
                }
            case (.ledger, .sqlite): return (try LedgerPaymentProvider(path: settings.ledgerPath), nil)
            case (.ledger, .postgres(let url)): return (try await PostgresLedgerPaymentProvider.open(url: url, logger: logger), nil)
            }
        } catch {
            throw exitWithError(
                "cannot open the payment provider (\(settings.paymentsDescription)): \(error)", program: program, code: ExitCodes.software)
        }
    }
}
