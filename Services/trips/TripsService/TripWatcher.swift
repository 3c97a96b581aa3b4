import Bus
import Foundation
import Geo
import Logging
import RideModels
import ServiceLifecycle
import Storage

/// Watches the devices of active trips — and only those: it subscribes to
/// `device.location.<id>` when a trip starts and drops it when the device's last trip ends, so
/// the bus filters out every other device. Each location moves the trip's progress; an arrival or
/// a new estimate is stored with its event (arrival at most once per trip).
public actor TripWatcher {
    private var live: [String: LiveTrip] = [:]
    private var tripsByDevice: [String: Set<String>] = [:]
    private var missingLastRound: Set<String> = []
    private let store: any TripStorage
    private let relay: OutboxRelay
    private let subscriber: EventSubscriber<DeviceLocationEvent>
    private let model: RouteModel
    private let logger: Logger

    init(store: any TripStorage, relay: OutboxRelay, subscriber: EventSubscriber<DeviceLocationEvent>, model: RouteModel, logger: Logger) {
        self.store = store
        self.relay = relay
        self.subscriber = subscriber
        self.model = model
        self.logger = logger
    }

    var activeCount: Int { live.count }

    func watch(_ trip: LiveTrip) {
        live[trip.trip.tripID] = trip
        let device = trip.trip.deviceID
        if tripsByDevice[device, default: []].isEmpty { subscriber.subscribe(BusContract.Topics.deviceLocation + device) }
        tripsByDevice[device, default: []].insert(trip.trip.tripID)
    }

    /// Watches a trip another instance created (known from `trip.created`), unless already watched.
    func adopt(tripID: String) async {
        guard live[tripID] == nil else { return }
        do {
            guard let trip = try await store.activeTrips(id: tripID).first, live[tripID] == nil else { return }
            watch(trip)
        } catch {
            logger.error("cannot load a trip another instance created", metadata: ["trip_id": "\(tripID)", "error": "\(error)"])
        }
    }

    /// Watches exactly `active` (the store's active trips): adopts the ones missing — a
    /// `trip.created` this instance did not receive — and lets go of the ones no longer active.
    /// A trip is let go only when two rounds in a row did not list it: one created while the
    /// list was being read is watched already but not in that list.
    func reconcile(active: [LiveTrip]) {
        let ids = Set(active.map(\.trip.tripID))
        for trip in active where live[trip.trip.tripID] == nil { watch(trip) }
        let missing = Set(live.keys.filter { !ids.contains($0) })
        for tripID in missing.intersection(missingLastRound) { stopWatching(tripID: tripID) }
        missingLastRound = missing
    }

    func stopWatching(tripID: String) {
        guard let trip = live.removeValue(forKey: tripID) else { return }
        let device = trip.trip.deviceID
        tripsByDevice[device]?.remove(tripID)
        if tripsByDevice[device]?.isEmpty == true {
            tripsByDevice[device] = nil
            subscriber.unsubscribe(BusContract.Topics.deviceLocation + device)
        }
    }

    /// One location of a watched device (or of another whose id the subscribed prefix also
    /// matched, which is ignored). `catchingUp`: from history after a restart, so no estimates.
    func handle(deviceID: String, fix: TrackPoint, now: Date = Date(), catchingUp: Bool = false) async {
        for tripID in tripsByDevice[deviceID] ?? [] {
            guard let before = live[tripID] else { continue }
            var trip = before
            var stored = true
            for signal in trip.progress.record(fix, model: model, now: now) {
                if catchingUp, case .eta = signal { continue }
                let event = trip.apply(signal)
                do {
                    // Bounded: this loop handles every watched device's locations one by one, so one
                    // store call that never returns would stop every arrival after it.
                    let (store, update) = (self.store, trip)
                    if try await withStorageDeadline(Self.storeDeadline, { try await store.update(update, event: event) }) { relay.notify() }
                } catch {
                    logger.error("trip update failed; the next location retries", metadata: ["trip_id": "\(tripID)", "error": "\(error)"])
                    stored = false
                    break
                }
            }
            // Kept only once stored: an arrival whose write failed (the database down) must be
            // seen again at the next location, not remembered as announced and never stored.
            if stored { live[tripID] = trip }
        }
    }

    /// How long one trip update may take before it counts as failed (the next location retries).
    static let storeDeadline = Duration.seconds(15)

    /// Consumes the subscription until shutdown.
    func run() async {
        for await batch in subscriber.deliveries {
            for case .event(let received) in batch {
                let data = received.event.data
                await handle(deviceID: data.deviceID, fix: TrackPoint(point: data.location.point, recordedAt: data.recordedAt,
                                                                     accuracy: data.accuracy, speed: data.speed))
            }
        }
    }
}

/// The watcher as a service of the process: resumes active trips (catching up on the locations
/// recorded while it was away), then follows the bus. With several instances of `ride-trips` on
/// one database, every instance watches every active trip — `trips` (`trip.created`) adopts the
/// ones another instance made, `trip.completed` lets them go, and every 5 s the active trips in the
/// database are reconciled with the watched ones (an event missed changes nothing for long) — so a
/// trip survives the loss of the instance that created it; the store records an arrival once,
/// whoever sees it first.
struct TripWatcherService: Service {
    let watcher: TripWatcher
    let store: any TripStorage
    let platform: ServiceClient
    let subscriber: EventSubscriber<DeviceLocationEvent>
    let trips: EventSubscriber<TripEvent>
    let logger: Logger

    func run() async throws {
        for trip in try await store.activeTrips() {
            await watcher.watch(trip)
            let history = LocationsParams(deviceID: trip.trip.deviceID, from: trip.trip.startedAt, limit: 10_000)
            if let missed = try? await platform.call(BusContract.Service.tracking, "locations", history, as: LocationHistory.self) {
                for location in missed.locations {
                    await watcher.handle(deviceID: trip.trip.deviceID, fix: TrackPoint(location), catchingUp: true)
                }
            }
        }
        let (watcher, trips) = (self.watcher, self.trips)
        await withGracefulShutdownHandler {
            await withDiscardingTaskGroup { group in
                group.addTask { await watcher.run() }
                // The events above are the fast path; this is the one that cannot be missed.
                let store = self.store, logger = self.logger
                group.addTask {
                    while !Task.isShuttingDownGracefully {
                        try? await cancelWhenGracefulShutdown { try await Task.sleep(for: .seconds(5)) }
                        guard !Task.isShuttingDownGracefully else { return }
                        do {
                            await watcher.reconcile(active: try await store.activeTrips())
                        } catch {
                            logger.warning("cannot list active trips; the next round retries", metadata: ["error": "\(error)"])
                        }
                    }
                }
                group.addTask {
                    for await batch in trips.deliveries {
                        for case .event(let received) in batch {
                            let data = received.event.data.data
                            if data.value == "created" { await watcher.adopt(tripID: data.tripID) }
                            if data.value == "completed" { await watcher.stopWatching(tripID: data.tripID) }
                        }
                    }
                }
            }
        } onGracefulShutdown: {
            Task {
                await subscriber.close()
                await trips.close()
            }
        }
    }
}

extension TrackPoint {
    init(_ location: DeviceLocation) {
        self.init(point: location.point, recordedAt: location.recordedAt, accuracy: location.accuracy, speed: location.speed)
    }
}
