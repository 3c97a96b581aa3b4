import Bus
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
        let host = ServiceHost(program: "ride-orders", service: BusContract.Service.orders, http: settings.http, logFormat: settings.logFormat, logLevel: settings.logLevel)
        let logger = host.logger
        let storage = try await ServiceStorage<any OrderStorage>.open(
            program: host.program, source: host.service, location: settings.database, publishTo: settings.pub, logger: logger,
            sqlite: { try OrderStore(path: $0) }, postgres: { try await PostgresOrderStore.open(url: $0, logger: logger) }, eventLog: \.eventLog)
        let (store, publisher, relay) = (storage.store, storage.publisher, storage.relay)
        let platform = try await ServiceClient(broker: settings.broker, logger: logger)
        let ledger: any PaymentProvider
        do {
            switch settings.database {
            case .sqlite: ledger = try LedgerPaymentProvider(path: settings.ledgerPath)
            case .postgres(let url): ledger = try await PostgresLedgerPaymentProvider.open(url: url, logger: logger)
            }
        } catch {
            throw exitWithError("cannot open the payment ledger (\(settings.ledgerDescription)): \(error)", program: host.program, code: ExitCodes.software)
        }
        let payments = PaymentCapture(store: store, provider: ledger, commissionPercent: settings.commissionPercent)
        var ops = OrdersOps(
            store: store, platform: platform, relay: relay, dispatch: settings.dispatch, fares: settings.fares, surge: settings.surge,
            payments: payments, logger: logger)
        let (completed, cancelled) = (host.metrics.counter(RideMetric.ridesCompleted), host.metrics.counter(RideMetric.ridesCancelled))
        ops.ended = { status in status == .completed ? completed.increment() : cancelled.increment() }
        ops.roads = try settings.routes.makeProvider(embedded: { try EmbeddedRoutes.helsinki() }, logger: logger)
        // Every topic of both sources (not just the arrivals of `trips`): only then is a sequence
        // gap a missed event rather than one not subscribed to.
        let statusEvents = try await EventSubscriber<LifecycleEvent>(
            endpoint: settings.sub, prefixes: [Events.orderRoot, Events.tripRoot], logger: logger)
        let reactor = OrdersReactor.make(
            reactions: OrderReactions(store: store, platform: platform, relay: relay, payments: payments, logger: logger),
            ops: ops, store: store, platform: platform, subscriber: statusEvents, latency: ReactionLatency(metrics: host.metrics), logger: logger)
        let deviceStatuses = try await EventSubscriber<DeviceStatusEvent>(endpoint: settings.sub, prefixes: [Events.deviceStatus.topic], logger: logger)
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
}
