import Bus
import Foundation
import Geo
import RideContract
import RideModels
import Roads
import Storage

/// What the trips service keeps: one protocol, a SQLite store (`TripStore`, the default) and a
/// PostgreSQL one (`PostgresTripStore`, when `RIDE_DATABASE_URL` is set, shared by instances).
/// Both pass the same storage test suite.
public protocol TripStorage: Sendable {
    /// The outbox of `trip.*` events, for the relay and the `events` op.
    var eventLog: any EventLog { get }
    /// Where keyed requests are remembered (`OpRouter.requests`).
    var requestLog: any RequestLog { get }

    /// Stores a new trip and its `trip.created` event (with `trip.eta` and `trip.destination_arrival`
    /// when the trip starts with them); with an idempotency key already used, returns the trip
    /// made then (and `created` false) and stores nothing.
    func create(_ live: LiveTrip, idempotencyKey: String?) async throws -> (trip: Trip, created: Bool)
    func trip(id: String) async throws -> Trip?
    func trip(shareID: String) async throws -> Trip?
    /// Active trips: all of them, or the one with `id` (none when it is not active).
    func activeTrips(id: String?) async throws -> [LiveTrip]
    /// The ids of the active trips: what the watcher's reconciliation needs every few seconds,
    /// without decoding every active trip's document and progress.
    func activeTripIDs() async throws -> Set<String>
    /// Saves an active trip (`live`) and `events` when its stored destination passes `accepts`
    /// (`update` and `changeDestination` say when); false when nothing was saved.
    func save(_ live: LiveTrip, events: [EventKind<TripEvent>], accepts: @escaping @Sendable (Trip.Destination) -> Bool)
        async throws -> Bool
    /// Completes a trip with its summary and the `trip.completed` event; an already completed
    /// trip is returned as it is (no second event); nil for an unknown trip.
    func complete(id: String, at time: Date, summary: TripSummary) async throws -> Trip?
}

extension TripStorage {
    public func activeTrips() async throws -> [LiveTrip] { try await activeTrips(id: nil) }

    /// Saves a live trip's progress and, with `event`, its changed document and that event — only
    /// while the trip is still active (a late location after completion changes nothing).
    /// Arrival is recorded at most once: a second arrival for the same trip changes nothing.
    /// False when nothing was saved.
    /// An update is stale — nothing saved — when the stored destination is another (changed since
    /// this copy was read) or was arrived at already.
    @discardableResult
    public func update(_ live: LiveTrip, event: EventKind<TripEvent>?) async throws -> Bool {
        try await save(live, events: event.map { [$0] } ?? []) { stored in !TripStorageRules.isStale(live, event: event, stored: stored) }
    }

    /// Saves an active trip with a new destination (`live`) and `events`, only while the stored
    /// destination is still `previous` and not arrived at (two changes at once: the second is
    /// refused). False when nothing was saved.
    public func changeDestination(_ live: LiveTrip, from previous: Trip.Destination, events: [EventKind<TripEvent>]) async throws -> Bool {
        try await save(live, events: events) { stored in TripStorageRules.mayChangeDestination(stored: stored, expected: previous) }
    }
}

/// A live trip: what apps see and what the watcher keeps.
public struct LiveTrip: Sendable, Equatable {
    public var trip: Trip
    public var progress: TripProgress
}

extension LiveTrip {
    /// A trip just made: no location seen yet, heading for its destination's fence.
    public init(starting trip: Trip) {
        self.init(
            trip: trip,
            progress: TripProgress(destination: Geofence(center: trip.destination.geometry.point, radius: trip.destination.radius)))
    }

    /// Writes what `signal` says into the trip's document; returns the `trip.*` event it makes
    /// (nil for a signal the watcher answers by planning a route: `needsRoute`, `offRoute`).
    mutating func apply(_ signal: TripSignal) -> EventKind<TripEvent>? {
        switch signal {
        case .arrived(let at, _):
            trip.destination.arrivedAt = at
            trip.estimate = nil
            return Events.tripDestinationArrival
        case .eta(let estimate):
            setEstimate(estimate)
            return Events.tripETA
        case .delayed(let estimate, let delay):
            setEstimate(estimate, delay: delay)
            return Events.tripDelayed
        case .needsRoute, .offRoute:
            return nil
        }
    }

    /// Follows `route` from now on (the first, or a re-route) and writes its estimate; returns
    /// the event: the first estimate (`trip.eta`) or `trip.rerouted`.
    mutating func follow(_ route: Route, model: RouteModel, observedFrom fix: TrackPoint?, now: Date) -> EventKind<TripEvent> {
        let rerouted = progress.plan != nil
        setEstimate(progress.follow(route, model: model, observedFrom: fix, now: now))
        return rerouted ? Events.tripRerouted : Events.tripETA
    }

    /// The trip's estimate: `estimate`, with the way left to drive when it is along roads.
    mutating func setEstimate(_ estimate: TripEstimate, delay: Int? = nil) {
        let plan = progress.plan
        let line =
            plan?.kind == RouteKind.road.rawValue
            ? progress.remainingLine.map { TripSummary.LineString(coordinates: $0.geoJSONCoordinates) } : nil
        let steps = plan?.kind == RouteKind.road.rawValue ? progress.remainingSteps : nil
        trip.estimate = Trip.Estimate(
            arriveAt: estimate.arriveAt,
            route: .init(
                distance: estimate.distance, duration: estimate.duration, remainingDuration: estimate.duration, polyline: line, steps: steps
            ),
            estimateKind: plan?.kind ?? RouteKind.straightLine.rawValue,
            delay: delay ?? plan.map { Int(estimate.arriveAt.timeIntervalSince($0.plannedArrival).rounded()) })
    }
}

/// The rules both stores apply the same way; each store only reads and writes its rows.
enum TripStorageRules {
    /// Whether an id (or key) can be stored, so whether a lookup by it may find anything. A NUL
    /// cannot: PostgreSQL's text refuses it (the query would fail), and SQLite would match the
    /// id cut short at the NUL (another trip). Both stores answer "none" instead.
    static func isStorable(_ id: String) -> Bool { !id.utf8.contains(0) }

    /// The events a new trip is stored with, in order.
    static func creationEvents(_ trip: Trip) -> [EventKind<TripEvent>] {
        var events = [Events.tripCreated]
        // The first estimate is news too: a rider's app shows an ETA as soon as the trip starts,
        // not one rate-limit interval later.
        if trip.estimate != nil { events.append(Events.tripETA) }
        // Already there when the trip starts (a driver waiting at the pickup): the arrival is
        // an event like any other, or whoever waits for it would wait forever.
        if trip.destination.arrivedAt != nil { events.append(Events.tripDestinationArrival) }
        return events
    }

    /// Whether an update of a trip whose stored destination is `stored` is stale: the destination
    /// changed (this copy heads for the old one) or was arrived at already (seen by another
    /// instance watching the same trip), so this copy is behind.
    static func isStale(_ live: LiveTrip, event: EventKind<TripEvent>?, stored: Trip.Destination) -> Bool {
        guard isSamePlace(stored, live.trip.destination) else { return true }
        return stored.arrivedAt != nil && (event?.type == Events.tripDestinationArrival.type || live.trip.destination.arrivedAt == nil)
    }

    /// Whether a destination change read from `expected` may be saved over `stored`.
    static func mayChangeDestination(stored: Trip.Destination, expected: Trip.Destination) -> Bool {
        stored.arrivedAt == nil && isSamePlace(stored, expected)
    }

    /// The same place to go: where, how near, the address (arrival aside).
    static func isSamePlace(_ a: Trip.Destination, _ b: Trip.Destination) -> Bool {
        a.geometry == b.geometry && a.radius == b.radius && a.address == b.address
    }

    /// The trip as completed at `time` with `summary`.
    static func completed(_ trip: Trip, at time: Date, summary: TripSummary) -> Trip {
        var trip = trip
        trip.status = .completed
        trip.completedAt = time
        trip.summary = summary
        trip.estimate = nil
        return trip
    }

    /// The events that carry the trip's estimate.
    static let estimating: Set<String> = [
        Events.tripETA.type, Events.tripRerouted.type, Events.tripDelayed.type, Events.tripDestinationChanged.type,
    ]

    /// The outbox entry of event `kind` (`trip.created`, `trip.eta`, …) of `trip`; its `value` is
    /// the kind's name after `trip.`, as HyperTrack's webhooks say it (`created`, `eta`, …).
    static func event(_ kind: EventKind<TripEvent>, _ trip: Trip) -> (topic: String, event: TripEvent) {
        let data = TripEvent.Data(
            value: String(kind.type.dropFirst(Events.tripRoot.count)), tripID: trip.tripID, tripMetadata: trip.metadata,
            estimate: estimating.contains(kind.type) ? trip.estimate : nil,
            summary: kind.type == Events.tripCompleted.type ? trip.summary : nil,
            arrivedAt: trip.destination.arrivedAt,
            destination: kind.type == Events.tripDestinationChanged.type ? trip.destination : nil)
        return (kind.topic, TripEvent(createdAt: Date(), deviceID: trip.deviceID, data: data))
    }
}
