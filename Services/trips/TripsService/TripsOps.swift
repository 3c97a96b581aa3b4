import Bus
import Foundation
import Geo
import Logging
import RideContract
import RideModels
import ServiceStorage
import Storage

/// The `trips` service's ops on the broker (HyperTrack's Trips API v3 over the bus).
struct TripsOps {
    let store: any TripStorage
    let watcher: TripWatcher
    let platform: ServiceClient
    let relay: OutboxRelay
    let model: RouteModel
    let logger: Logger

    func router(instance: String) -> OpRouter {
        var router = OpRouter(service: BusContract.Service.trips, instance: instance)
        router.on(Ops.Trips.create) { (params: CreateTripParams, _) -> Replied<Trip> in
            let (trip, created) = try await create(params)
            return Replied(status: created ? Status.created : Status.ok, body: trip)
        }
        router.on(Ops.Trips.get) { (params: TripIDParams, _) -> Trip in
            guard let trip = try await store.trip(id: params.tripID) else { throw unknownTrip(params.tripID) }
            return trip
        }
        router.on(Ops.Trips.getByShare) { (params: ShareIDParams, _) -> Trip in
            guard ShareID.isValid(params.shareID), let trip = try await store.trip(shareID: params.shareID) else {
                throw ServiceError.notFound("unknown_share", "no trip is shared as \(params.shareID.prefix(20))")
            }
            return trip
        }
        router.on(Ops.Trips.complete) { (params: TripIDParams, _) -> Trip in try await complete(params.tripID) }
        router.on(Ops.Trips.changeDestination) { (params: ChangeTripDestinationParams, _) -> Trip in try await changeDestination(params) }
        router.on(Ops.Trips.events) { (query: EventsQuery, _) -> EventsPage in
            try await store.eventLog.page(source: BusContract.Service.trips, query: query)
        }
        return router
    }

    func create(_ params: CreateTripParams) async throws -> (Trip, Bool) {
        let radius = params.destination.radius ?? 30
        let now = Date()
        let tripID = UUID().uuidString.lowercased()
        let trip = Trip(
            // A trip without a link still has a unique share_id, one no share id is shaped like.
            tripID: tripID, shareID: params.shared == false ? "-" + tripID : ShareID.make(), deviceID: params.deviceID, status: .active,
            startedAt: now,
            destination: .init(geometry: params.destination.geometry, radius: radius, address: params.destination.address),
            metadata: params.metadata)
        var live = LiveTrip(starting: trip)
        await estimateFromWhereTheDeviceIs(&live, now: now)
        let (stored, created) = try await store.create(live, idempotencyKey: params.idempotencyKey)
        if created {
            relay.notify()
            await watcher.watch(live)
        }
        return (stored, created)
    }

    func complete(_ id: String) async throws -> Trip {
        guard let trip = try await store.trip(id: id) else { throw unknownTrip(id) }
        guard trip.status == .active else { return trip }
        let now = Date()
        // Everything since the start: a phone whose clock runs a little ahead still counts.
        let history = LocationsParams(deviceID: trip.deviceID, from: trip.startedAt, limit: 10_000)
        let track: [TrackPoint]
        do {
            track = try await platform.call(Ops.Tracking.locations, history).locations.map(TrackPoint.init)
        } catch let error as ServiceError where error.status == Status.notFound {
            track = []  // a device that never reported: an empty route
        }
        let arrival = trip.destination.arrivedAt.map {
            TripSummary.Marker(type: "arrival", recordedAt: $0, location: trip.destination.geometry)
        }
        var summary = TripSummaryBuilder.summary(
            track: track, deviceID: trip.deviceID, startedAt: trip.startedAt, completedAt: now, arrival: arrival)
        if let plan = try await store.activeTrips(id: id).first?.progress.plan {
            summary.plannedDistance = Int(plan.plannedDistance.rounded())
            summary.reroutes = plan.reroutes
        }
        guard let completed = try await store.complete(id: id, at: now, summary: summary) else { throw unknownTrip(id) }
        relay.notify()
        await watcher.stopWatching(tripID: id)
        return completed
    }

    /// The trip's first estimate (or its arrival, when the device is there already), from the
    /// device's last position, before the trip is stored: that estimate is the promise.
    func estimateFromWhereTheDeviceIs(_ live: inout LiveTrip, now: Date) async {
        guard let fix = await startingFix(of: live.trip.deviceID) else { return }
        for signal in live.progress.record(fix, model: model, rules: watcher.rules, now: now) {
            if let from = signal.routeStart {
                if let route = await watcher.plannedRoute(from: from, to: live.progress.destination.center, tripID: live.trip.tripID) {
                    _ = live.follow(route, model: model, observedFrom: fix, now: now)
                }
            } else {
                _ = live.apply(signal)
            }
        }
    }

    /// A new destination for an active trip: a new route and estimate from where the device is,
    /// stored with `trip.destination_changed` (and the arrival, when the device is there already);
    /// every instance watching the trip loads it again. The same destination again answers the
    /// trip as it is; an arrived or completed trip keeps its destination (409).
    func changeDestination(_ params: ChangeTripDestinationParams) async throws -> Trip {
        guard var live = try await store.activeTrips(id: params.tripID).first else {
            guard let trip = try await store.trip(id: params.tripID) else { throw unknownTrip(params.tripID) }
            throw ServiceError.conflict("trip_completed", "trip \(trip.tripID) is completed: its destination no longer changes")
        }
        let previous = live.trip.destination
        let destination = Trip.Destination(
            geometry: params.destination.geometry, radius: params.destination.radius ?? previous.radius, address: params.destination.address
        )
        if TripStorageRules.isSamePlace(destination, previous) { return live.trip }  // a retry
        guard previous.arrivedAt == nil else {
            throw ServiceError.conflict("arrived", "trip \(live.trip.tripID) has reached its destination: a new one is a new trip")
        }
        live.trip.destination = destination
        live.trip.estimate = nil
        live.progress.changeDestination(to: Geofence(center: destination.geometry.point, radius: destination.radius))
        await estimateFromWhereTheDeviceIs(&live, now: Date())
        var events = [Events.tripDestinationChanged]
        if live.trip.destination.arrivedAt != nil { events.append(Events.tripDestinationArrival) }
        guard try await store.changeDestination(live, from: previous, events: events) else {
            throw ServiceError.conflict(
                "changed_meanwhile",
                "trip \(live.trip.tripID) changed while its destination was being changed (arrived, completed, or another change); read it and ask again"
            )
        }
        relay.notify()
        await watcher.replace(live)
        return live.trip
    }

    /// Where the device is, for a new trip's first estimate: as the watcher last saw it when it
    /// watches the device or let it go moments ago (the dropoff trip after the pickup trip: no
    /// call), else as tracking knows it.
    func startingFix(of deviceID: String) async -> TrackPoint? {
        if let fix = await watcher.latestFix(of: deviceID) { return fix }
        let device = try? await platform.call(Ops.Tracking.device, DeviceParams(deviceID: deviceID), timeout: .seconds(2))
        return device?.location.map(TrackPoint.init)
    }

    func unknownTrip(_ id: String) -> ServiceError { ServiceError.notFound("unknown_trip", "no trip with id \(id)") }
}
