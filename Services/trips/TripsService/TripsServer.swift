import Bus
import Foundation
import Geo
import Logging
import RideContract
import RideModels
import ServiceKit
import ServiceStorage
import Storage

/// The running trips service.
public struct TripsServer: Sendable {
    public let settings: TripsSettings

    public init(settings: TripsSettings) { self.settings = settings }

    public func run() async throws {
        let logger = RideLogging.bootstrap(label: "ride-trips", format: settings.logFormat, level: settings.logLevel)
        let metrics = ServiceMetrics.bootstrap()
        let storage = try await ServiceStorage<any TripStorage>.open(
            program: "ride-trips", source: BusContract.Service.trips, location: settings.database, publishTo: settings.pub, logger: logger,
            sqlite: { try TripStore(path: $0) }, postgres: { try await PostgresTripStore.open(url: $0, logger: logger) }, eventLog: \.eventLog)
        let (store, publisher, relay) = (storage.store, storage.publisher, storage.relay)
        let platform = try await ServiceClient(broker: settings.broker, logger: logger)
        // No prefix at first: the watcher subscribes per device as trips start.
        let subscriber = try await EventSubscriber<DeviceLocationEvent>(endpoint: settings.sub, prefixes: [], logger: logger)
        let model = RouteModel()
        let watcher = TripWatcher(store: store, relay: relay, subscriber: subscriber, model: model, logger: logger)
        // Other instances' trips: adopted when created, let go when completed.
        let trips = try await EventSubscriber<TripEvent>(
            endpoint: settings.sub, prefixes: [Events.tripCreated.topic, Events.tripCompleted.topic],
            logger: logger)
        let watching = TripWatcherService(watcher: watcher, store: store, platform: platform, subscriber: subscriber, trips: trips, logger: logger)
        let instance = UUID().uuidString.lowercased()
        let startedAt = Date()
        var workerOptions = MDPWorker.Options()
        workerOptions.concurrency = settings.concurrency
        let ops = TripsOps(store: store, watcher: watcher, platform: platform, relay: relay, model: model, logger: logger)
        let worker = ServiceWorker(broker: settings.broker, router: ops.router(instance: instance), options: workerOptions, logger: logger)
        let settings = self.settings
        let status = StatusServer.make(
            address: settings.http, serviceName: "ride-trips", metrics: metrics, logger: logger,
            onRunning: { port in
                logger.info("trips ready", metadata: ["broker": "\(settings.broker)", "http": "\(settings.http.host):\(port)", "database": "\(settings.database)"])
            }
        ) {
            HealthReport(
                status: .ok, service: "trips", instance: instance, uptimeSeconds: Date().timeIntervalSince(startedAt),
                details: ["active_trips": .number(Double(await watcher.activeCount))])
        }
        let closing = ShutdownHook {
            await platform.close()
            await publisher.close()
            logger.info("trips stopped")
        }
        do {
            try await ServiceRunner.run([closing, relay, watching, worker, status], logger: logger)
        } catch  where isAddressInUse(error) {
            throw exitWithError("cannot listen on HTTP address \(settings.http) (--http): Address already in use", program: "ride-trips", code: ExitCodes.unavailable)
        }
    }
}
