import Bus
import Cities
import Foundation
import Geo
import Logging
import RideContract
import RideModels
import RoadServers
import Roads
import ServiceKit
import ServiceStorage
import Storage

/// The running trips service.
public struct TripsServer: Sendable {
    public let settings: TripsSettings

    public init(settings: TripsSettings) { self.settings = settings }

    public func run() async throws {
        let host = ServiceHost(.trips, settings: settings)
        let logger = host.logger
        let storage = try await ServiceStorage<any TripStorage>.open(
            for: host, settings, sqlite: { try TripStore(path: $0) }, postgres: { try await PostgresTripStore.open(url: $0, logger: $1) },
            eventLog: \.eventLog)
        let (store, publisher, relay) = (storage.store, storage.publisher, storage.relay)
        let platform = try await host.client(broker: settings.broker)
        // No prefix at first: the watcher subscribes per device as trips start.
        let subscriber = try await EventSubscriber<DeviceLocationEvent>(
            endpoint: settings.sub, prefixes: [], options: .platform, logger: logger)
        let model = RouteModel()
        let routes = try settings.routes.makeProvider(embedded: { try settings.city.load().routes }, logger: logger)
        let watcher = TripWatcher(
            store: store, relay: relay, subscriber: subscriber, model: model, routes: routes, rules: settings.follow, logger: logger)
        // Other instances' trips: adopted when created, let go when completed.
        let trips = try await EventSubscriber<TripEvent>(
            endpoint: settings.sub, prefixes: [Events.tripCreated.topic, Events.tripCompleted.topic],
            options: .platform, logger: logger)
        let watching = TripWatcherService(
            watcher: watcher, store: store, platform: platform, subscriber: subscriber, trips: trips, logger: logger)
        host.needsBus([subscriber, trips], at: settings.sub)
        host.needsDatabase(relay)
        let ops = TripsOps(store: store, watcher: watcher, platform: platform, relay: relay, model: model, logger: logger)
        var router = ops.router(instance: host.instance)
        router.requests = store.requestLog
        let worker = host.worker(broker: settings.broker, router: router, concurrency: settings.concurrency)
        let closing = ShutdownHook {
            await platform.close()
            await publisher.close()
            logger.info("trips stopped")
        }
        try await host.run(
            [closing, relay, watching, worker], ready: ["broker": "\(settings.broker)", "database": "\(settings.database)"]
        ) {
            host.health(["active_trips": .number(Double(await watcher.activeCount))])
        }
    }
}
