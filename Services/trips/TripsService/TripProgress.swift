import Foundation
import Geo
import RideModels
import Roads
import Wire

/// One location of the trip's device.
@WireModel
public struct TrackPoint: Sendable, Equatable, Codable {
    public var point: GeoPoint
    public var recordedAt: Date
    /// Metres (the fix's uncertainty radius).
    public var accuracy: Double?
    /// Metres per second, as the device reports it.
    public var speed: Double?

    /// Stored with the trip as it is, keys as the Swift names (rows written before keep decoding).
    enum CodingKeys: String, CodingKey {
        case point, recordedAt, accuracy, speed
    }

    public init(point: GeoPoint, recordedAt: Date, accuracy: Double? = nil, speed: Double? = nil) {
        self.point = point
        self.recordedAt = recordedAt
        self.accuracy = accuracy
        self.speed = speed
    }
}

/// Distance travelled along a track with GPS jitter left out. A fix counts only when it is newer
/// than the last counted one and farther from it than the two fixes' uncertainties together (at
/// least 5 m) — two fixes of a parked phone can be that far apart — so a phone wandering inside
/// its accuracy circle adds nothing, while slow real movement adds up once it leaves the circle
/// (measured as chords between counted fixes, which on streets loses well under 5%). A jump that would need more than 70 m/s is a
/// bad fix and is skipped.
@WireModel
public struct TrackOdometer: Sendable, Equatable, Codable {
    public private(set) var distance: Double = 0
    public private(set) var last: TrackPoint?

    public init() {}

    /// Whether the fix was counted.
    @discardableResult
    public mutating func add(_ fix: TrackPoint) -> Bool {
        guard let last else {
            self.last = fix
            return true
        }
        guard fix.recordedAt > last.recordedAt else { return false }
        let step = last.point.distance(to: fix.point)
        let noise = max(5, (fix.accuracy.map { max(0, $0) } ?? 0) + (last.accuracy.map { max(0, $0) } ?? 0))
        guard step > noise else { return false }
        let seconds = fix.recordedAt.timeIntervalSince(last.recordedAt)
        guard step / seconds <= 70 else { return false }
        distance += step
        self.last = fix
        return true
    }
}

/// What a new location means for a trip.
public enum TripSignal: Sendable, Equatable {
    /// The device entered the destination's geofence (once per trip).
    case arrived(at: Date, point: GeoPoint)
    /// A new estimate (at most one per `etaInterval`).
    case eta(TripEstimate)
    /// The trip has no route yet: one is to be planned from here (the watcher asks the provider).
    case needsRoute(from: GeoPoint)
    /// The device has left the route: a new one is to be planned from here.
    case offRoute(at: GeoPoint)
    /// The estimate slipped past the first one by another delay threshold: `delay` seconds late.
    case delayed(TripEstimate, delay: Int)
}

/// A live trip's state, fed one location at a time: arrival, estimates, distance so far.
@WireModel
public struct TripProgress: Sendable, Equatable, Codable {
    public var destination: Geofence
    public private(set) var arrivedAt: Date?
    public private(set) var odometer: TrackOdometer = TrackOdometer()
    /// Smoothed reported speed while moving (exponential average, weight 0.3 for the newest).
    public private(set) var observedSpeed: Double?
    public private(set) var lastETAAt: Date?
    public var etaInterval: TimeInterval = 5
    /// The route followed, once one is planned (`follow(_:now:)`).
    public private(set) var plan: RoutePlan?
    /// Where on the route the device was last seen.
    public private(set) var position: LinePosition?

    /// Stored with the trip as it is, keys as the Swift names (rows written before keep decoding).
    enum CodingKeys: String, CodingKey {
        case destination, arrivedAt, odometer, observedSpeed, lastETAAt, etaInterval, plan, position
    }

    public init(destination: Geofence) { self.destination = destination }

    public mutating func record(_ fix: TrackPoint, model: RouteModel, rules: FollowRules = FollowRules(), now: Date) -> [TripSignal] {
        odometer.add(fix)
        if let speed = fix.speed, speed.isFinite, speed >= 1 {
            observedSpeed = observedSpeed.map { 0.7 * $0 + 0.3 * speed } ?? speed
        }
        guard arrivedAt == nil else { return [] }
        if destination.contains(fix.point, accuracy: fix.accuracy ?? 0) {
            arrivedAt = fix.recordedAt
            return [.arrived(at: fix.recordedAt, point: fix.point)]
        }
        guard var plan else { return [.needsRoute(from: fix.point)] }
        defer { self.plan = plan }
        let onRoad = plan.kind == RouteKind.road.rawValue
        // A straight-line "route" is no road to keep to: only a road route can be left.
        if onRoad, let position = plan.line.locate(fix.point) {
            let tolerance = rules.offRouteMetres + min(50, max(0, fix.accuracy ?? 0))
            plan.offRouteFixes = position.offset > tolerance ? plan.offRouteFixes + 1 : 0
            if plan.offRouteFixes >= rules.offRouteFixes {
                plan.offRouteFixes = 0
                return [.offRoute(at: fix.point)]
            }
            if position.offset <= tolerance { self.position = position }
        }
        if let lastETAAt, now.timeIntervalSince(lastETAAt) < etaInterval { return [] }
        lastETAAt = now
        var estimate = estimate(plan, now: now)
        if !onRoad {
            // No road data: the straight line from here, at the speed the device shows.
            let straight = model.estimate(from: fix.point, to: destination.center, observedSpeed: observedSpeed, now: now)
            estimate = (straight, Int(straight.arriveAt.timeIntervalSince(plan.plannedArrival).rounded()))
        }
        let level = estimate.delay.map { max(0, Int(Double($0) / rules.delayThreshold(plan))) } ?? 0
        guard level > plan.delayLevel else { return [.eta(estimate.estimate)] }
        plan.delayLevel = level
        return [.eta(estimate.estimate), .delayed(estimate.estimate, delay: estimate.delay ?? 0)]
    }

    /// Follows `route` from now on: the first plan sets the promise delays are measured against;
    /// a later one is a re-route. Returns the estimate along it.
    /// Without road data (a straight-line route) the estimate is the model's from `fix`, at the
    /// speed the device shows, as every later one will be.
    public mutating func follow(_ route: Route, model: RouteModel, observedFrom fix: TrackPoint?, now: Date) -> TripEstimate {
        var next = plan ?? RoutePlan(route: route, now: now)
        if plan != nil { next.reroute(route) }
        position = LinePosition(along: 0, offset: 0, segment: 0)
        lastETAAt = now
        if route.kind == .straightLine, let start = fix?.point ?? route.line.points.first {
            let straight = model.estimate(from: start, to: destination.center, observedSpeed: observedSpeed, now: now)
            if plan == nil { (next.plannedArrival, next.plannedDuration) = (straight.arriveAt, Double(straight.duration)) }
            plan = next
            return straight
        }
        plan = next
        return estimate(next, now: now).estimate
    }

    /// Heads for `fence` instead: the route, the position on it and the promise start over (the
    /// next location plans a route and makes a new first estimate); the distance so far stays.
    public mutating func changeDestination(to fence: Geofence) {
        destination = fence
        plan = nil
        position = nil
        lastETAAt = nil
    }

    /// The estimate along the plan from the last position, and how late it runs.
    func estimate(_ plan: RoutePlan, now: Date) -> (estimate: TripEstimate, delay: Int?) {
        let left = plan.remaining(from: position ?? LinePosition(along: 0, offset: 0, segment: 0))
        let arriveAt = now.addingTimeInterval(left.duration)
        let estimate = TripEstimate(distance: Int(left.distance.rounded()), duration: Int(left.duration.rounded()), arriveAt: arriveAt)
        return (estimate, Int(arriveAt.timeIntervalSince(plan.plannedArrival).rounded()))
    }

    /// The stretches left to drive, turn by turn (nil before a road plan).
    public var remainingSteps: [Trip.Step]? {
        plan?.remainingSteps(from: position ?? LinePosition(along: 0, offset: 0, segment: 0))
    }

    /// What is left of the route to drive (nil before a plan).
    public var remainingLine: Polyline? {
        guard let plan else { return nil }
        return plan.remainingLine(from: position ?? LinePosition(along: 0, offset: 0, segment: 0))
    }
}

extension TripSignal {
    /// Whether the signal is only news while it happens (skipped when catching up on history).
    var isLive: Bool {
        switch self {
        case .eta, .delayed, .offRoute: true
        case .arrived, .needsRoute: false
        }
    }

    /// Where a route is to be planned from, for the signals that ask for one.
    var routeStart: GeoPoint? {
        switch self {
        case .needsRoute(let from), .offRoute(let from): from
        default: nil
        }
    }
}
