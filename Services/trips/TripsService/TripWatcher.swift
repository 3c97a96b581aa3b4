import Bus
import Foundation
import Geo
import Logging
import RideContract
import RideModels
import Roads
import ServiceLifecycle
import ServiceStorage
import Storage

/// Watches the devices of active trips — and only those: it subscribes to
/// `device.location.<id>` when a trip starts and drops it two minutes after the device's last trip
/// ends (its next trip starts from where it is now), so the bus filters out every other device. Each location moves the trip's progress; an arrival or
/// a new estimate is stored with its event (arrival at most once per trip).
public actor TripWatcher {
    private var live: [String: LiveTrip] = [:]
    private var tripsByDevice: [String: Set<String>] = [:]
    private var missingLastRound: Set<String> = []
    private var silence = DeviceSilence()
    private let store: any TripStorage
    private let relay: OutboxRelay
    private let subscriber: EventSubscriber<DeviceLocationEvent>
    private let model: RouteModel
    let routes: any RouteProvider
    let rules: FollowRules
    /// Trips whose route is being planned: a location arriving meanwhile does not plan again.
    private var planning: Set<String> = []
    private let logger: Logger

    init(
        store: any TripStorage, relay: OutboxRelay, subscriber: EventSubscriber<DeviceLocationEvent>, model: RouteModel,
        routes: any RouteProvider = StraightLineRoutes(), rules: FollowRules = FollowRules(), logger: Logger
    ) {
        self.store = store
        self.relay = relay
        self.subscriber = subscriber
        self.model = model
        self.routes = routes
        self.rules = rules
        self.logger = logger
    }

    var activeCount: Int { live.count }

    func watch(_ trip: LiveTrip) {
        live[trip.trip.tripID] = trip
        let device = trip.trip.deviceID
        if !silence.isHeard(device) { subscriber.subscribe(Events.deviceLocation.topic + device) }
        tripsByDevice[device, default: []].insert(trip.trip.tripID)
        silence.watch(device, since: trip.trip.startedAt, now: Date())
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

    /// Goes on with `trip` as stored now (its destination changed here), if it is watched.
    func replace(_ trip: LiveTrip) {
        guard live[trip.trip.tripID] != nil else { return watch(trip) }
        live[trip.trip.tripID] = trip
    }

    /// Reads a watched trip again: its destination changed elsewhere (`trip.destination_changed`),
    /// or the store refused this copy's update as stale. Let go once no longer active.
    func reload(tripID: String) async {
        guard live[tripID] != nil else { return }
        do {
            guard let trip = try await store.activeTrips(id: tripID).first else { return stopWatching(tripID: tripID) }
            if live[tripID] != nil { live[tripID] = trip }
        } catch {
            logger.warning(
                "cannot read a watched trip again; the next refused update retries",
                metadata: ["trip_id": "\(tripID)", "error": "\(error)"])
        }
    }

    /// Watches exactly the trips `ids` (the store's active trips): adopts the ones missing — a
    /// `trip.created` this instance did not receive — and lets go of the ones no longer active.
    /// A trip is let go only when two rounds in a row did not list it: one created while the
    /// list was being read is watched already but not in that list. Only the adopted trips are
    /// loaded (a round over 1 000 active trips decoded them all, every 5 s).
    func reconcile(activeIDs ids: Set<String>) async {
        for tripID in ids where live[tripID] == nil { await adopt(tripID: tripID) }
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
            silence.forget(device, now: Date())  // still heard a while: `quietDevices` lets it go
        }
    }

    /// The watched devices no location came from for a while, and where to read their history
    /// from (see `DeviceSilence`).
    /// Also ends the subscriptions of devices let go `DeviceSilence.remembered` ago.
    func quietDevices(now: Date = Date()) -> [(deviceID: String, from: Date)] {
        for device in silence.expired(now: now) { subscriber.unsubscribe(Events.deviceLocation.topic + device) }
        return silence.due(now: now)
    }

    /// The newest location seen of a device watched now or still heard after its last trip (nil:
    /// none seen): a new trip for it (the dropoff after the pickup) starts from it, no call needed.
    func latestFix(of deviceID: String) -> TrackPoint? { silence.latest(of: deviceID) }

    /// One location of a watched device (or of another whose id the subscribed prefix also
    /// matched, which is ignored). `catchingUp`: from history, so no estimates. Returns how many
    /// arrivals it stored.
    @discardableResult
    func handle(deviceID: String, fix: TrackPoint, now: Date = Date(), catchingUp: Bool = false) async -> Int {
        var arrivals = 0
        silence.heard(deviceID, fix: fix, now: now)
        guard let trips = tripsByDevice[deviceID] else { return 0 }
        for tripID in trips {
            guard let before = live[tripID] else { continue }
            var trip = before
            var stored = true
            var stale = false
            for signal in trip.progress.record(fix, model: model, rules: rules, now: now) {
                if catchingUp, signal.isLive { continue }  // news of the past, or a detour already driven
                let event: EventKind<TripEvent>?
                if let from = signal.routeStart {
                    guard !planning.contains(tripID) else { continue }
                    planning.insert(tripID)
                    let route = await plannedRoute(from: from, to: trip.progress.destination.center, tripID: tripID)
                    planning.remove(tripID)
                    guard let route else { continue }
                    let followed = trip.follow(route, model: model, observedFrom: fix, now: now)
                    event = catchingUp ? nil : followed  // from history: the route is kept, its estimate is old news
                    if followed.type == Events.tripRerouted.type {
                        logger.info("trip re-routed", metadata: ["trip_id": "\(tripID)", "from": "\(from.latitude),\(from.longitude)"])
                    }
                } else {
                    guard let applied = trip.apply(signal) else { continue }
                    event = applied
                }
                do {
                    // Bounded: this loop handles every watched device's locations one by one, so one
                    // store call that never returns would stop every arrival after it.
                    let (store, update) = (self.store, trip)
                    // A stored change (an arrival, a new estimate) is a `trip.watch` span; plain fixes make none.
                    let changed = try await Trace.span("trip.watch", kind: .internal) { span in
                        if let span {
                            span.describe(update.trip)
                            span.set("ride.event_type", event?.type)
                        }
                        return try await withStorageDeadline(Self.storeDeadline, { try await store.update(update, event: event) })
                    }
                    guard changed else {
                        stale = true  // another instance arrived, or the destination changed: this copy is behind
                        break
                    }
                    relay.notify()
                    if case .arrived = signal { arrivals += 1 }
                } catch {
                    logger.error("trip update failed; the next location retries", metadata: ["trip_id": "\(tripID)", "error": "\(error)"])
                    stored = false
                    break
                }
            }
            // Kept only once stored: an arrival whose write failed (the database down) must be
            // seen again at the next location, not remembered as announced and never stored.
            // And only while still watched: the trip may have been let go during the write, and
            // put back it would sit in `live` without its device's subscription, so never be
            // watched again (reconcile adopts only trips missing from `live`).
            if stale {
                await reload(tripID: tripID)
            } else if stored, live[tripID] != nil {
                live[tripID] = trip
            }
        }
        return arrivals
    }

    /// A route from `start` to the destination (the provider falls back to the straight line
    /// itself; an error here is one it could not even do that for: logged, the next fix retries).
    func plannedRoute(from start: GeoPoint, to end: GeoPoint, tripID: String) async -> Route? {
        do {
            return try await routes.route(from: start, to: end)
        } catch {
            logger.warning("no route for a trip; the next location retries", metadata: ["trip_id": "\(tripID)", "error": "\(error)"])
            return nil
        }
    }

    /// How long one trip update may take before it counts as failed (the next location retries).
    static let storeDeadline = Duration.seconds(15)

    /// Consumes the subscription until shutdown.
    func run() async {
        for await batch in subscriber.deliveries {
            for case .event(let received) in batch {
                let data = received.event.data
                await handle(deviceID: data.deviceID, fix: TrackPoint(data))
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
            do {
                _ = try await catchUp(deviceID: trip.trip.deviceID, from: trip.trip.startedAt)
            } catch {
                logger.warning(
                    "cannot read a trip's locations recorded while trips was away; retried while the device stays quiet",
                    metadata: ["trip_id": "\(trip.trip.tripID)", "error": "\(error)"])
            }
        }
        let (watcher, trips) = (self.watcher, self.trips)
        await withGracefulShutdownHandler {
            await withDiscardingTaskGroup { group in
                group.addTask { await watcher.run() }
                // The events above are the fast path; this is the one that cannot be missed.
                let store = self.store
                let logger = self.logger
                group.addTask {
                    while !Task.isShuttingDownGracefully {
                        try? await cancelWhenGracefulShutdown { try await Task.sleep(for: .seconds(5)) }
                        guard !Task.isShuttingDownGracefully else { return }
                        do {
                            await watcher.reconcile(activeIDs: try await store.activeTripIDs())
                        } catch {
                            logger.warning("cannot list active trips; the next round retries", metadata: ["error": "\(error)"])
                        }
                        await catchUpQuietDevices()
                    }
                }
                group.addTask {
                    for await batch in trips.deliveries {
                        for case .event(let received) in batch {
                            let data = received.event.data.data
                            if received.event.type == Events.tripCreated.type { await watcher.adopt(tripID: data.tripID) }
                            if received.event.type == Events.tripCompleted.type { await watcher.stopWatching(tripID: data.tripID) }
                            if received.event.type == Events.tripDestinationChanged.type { await watcher.reload(tripID: data.tripID) }
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

    /// Handles the device's locations that tracking stored since `from` (inclusive: one seen
    /// already changes nothing). Returns how many locations it read and how many arrivals they made.
    func catchUp(deviceID: String, from: Date) async throws -> (locations: Int, arrivals: Int) {
        let history = LocationsParams(deviceID: deviceID, from: from, limit: 10_000)
        let missed = try await platform.call(Ops.Tracking.locations, history)
        var arrivals = 0
        for location in missed.locations {
            arrivals += await watcher.handle(deviceID: deviceID, fix: TrackPoint(location), catchingUp: true)
        }
        return (missed.locations.count, arrivals)
    }

    /// Reads the history of the devices that went quiet: an arrival the bus lost is found there.
    func catchUpQuietDevices() async {
        var failures: [String] = []
        for (deviceID, from) in await watcher.quietDevices() {
            do {
                let (locations, arrivals) = try await catchUp(deviceID: deviceID, from: from)
                if arrivals > 0 {
                    // Worth knowing: the bus lost a location that mattered (the arrival is stored now).
                    logger.warning(
                        "an arrival found in tracking's history of a quiet device; the bus had not delivered it",
                        metadata: ["device_id": "\(deviceID)", "locations": "\(locations)", "arrivals": "\(arrivals)"])
                } else if locations > 1 {
                    // More than the last one seen (`from` is inclusive): the bus is not delivering this device.
                    logger.info(
                        "read locations of a quiet device the bus had not delivered",
                        metadata: ["device_id": "\(deviceID)", "locations": "\(locations)"])
                }
            } catch let error as ServiceError where error.status == Status.notFound {
                continue  // a device that never reported: nothing to catch up
            } catch {
                failures.append("\(deviceID): \(error)")
            }
        }
        if let first = failures.first {
            logger.warning(
                "cannot read quiet devices' history; retried while they stay quiet",
                metadata: ["devices": "\(failures.count)", "first": "\(first)"])
        }
    }
}

extension TrackPoint {
    init(_ location: DeviceLocation) {
        self.init(point: location.point, recordedAt: location.recordedAt, accuracy: location.accuracy, speed: location.speed)
    }

    init(_ location: LatestLocation) {
        self.init(point: location.geometry.point, recordedAt: location.recordedAt, accuracy: location.accuracy, speed: location.speed)
    }

    init(_ event: DeviceLocationEvent) {
        self.init(point: event.location.point, recordedAt: event.recordedAt, accuracy: event.accuracy, speed: event.speed)
    }
}
