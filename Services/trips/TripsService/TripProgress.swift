import Foundation
import Geo

/// One location of the trip's device.
public struct TrackPoint: Sendable, Equatable, Codable {
    public var point: GeoPoint
    public var recordedAt: Date
    /// Metres (the fix's uncertainty radius).
    public var accuracy: Double?
    /// Metres per second, as the device reports it.
    public var speed: Double?

    public init(point: GeoPoint, recordedAt: Date, accuracy: Double? = nil, speed: Double? = nil) {
        self.point = point
        self.recordedAt = recordedAt
        self.accuracy = accuracy
        self.speed = speed
    }
}

/// The estimate model, documented because riders see its numbers: the route is the straight line
/// times a road factor (streets are not straight: 1.3 is the usual urban detour ratio), driven at
/// the device's observed speed once it is moving, else at a default city speed.
public struct RouteModel: Sendable, Equatable {
    public var roadFactor = 1.3
    /// Metres per second before the device has shown its own speed (30 km/h).
    public var defaultSpeed = 8.3
    /// Observed speeds are clamped to this range (a car waiting at a light is not a 0 m/s trip).
    public var speedRange: ClosedRange<Double> = 3...30

    public init() {}

    public func estimate(from start: GeoPoint, to end: GeoPoint, observedSpeed: Double?, now: Date) -> TripEstimate {
        let distance = start.distance(to: end) * roadFactor
        let speed = observedSpeed.map { min(max($0, speedRange.lowerBound), speedRange.upperBound) } ?? defaultSpeed
        let duration = distance / speed
        return TripEstimate(distance: Int(distance.rounded()), duration: Int(duration.rounded()), arriveAt: now.addingTimeInterval(duration))
    }
}

/// Where the trip stands: distance and time to go, and when it should arrive.
public struct TripEstimate: Sendable, Equatable, Codable {
    /// Metres of route left.
    public var distance: Int
    /// Seconds left.
    public var duration: Int
    public var arriveAt: Date

    public init(distance: Int, duration: Int, arriveAt: Date) {
        self.distance = distance
        self.duration = duration
        self.arriveAt = arriveAt
    }

    enum CodingKeys: String, CodingKey {
        case distance, duration
        case arriveAt = "arrive_at"
    }
}

/// Distance travelled along a track with GPS jitter left out. A fix counts only when it is newer
/// than the last counted one and farther from it than the two fixes' uncertainties together (at
/// least 5 m) — two fixes of a parked phone can be that far apart — so a phone wandering inside
/// its accuracy circle adds nothing, while slow real movement adds up once it leaves the circle
/// (measured as chords between counted fixes, which on streets loses well under 5%). A jump that would need more than 70 m/s is a
/// bad fix and is skipped.
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
}

/// A live trip's state, fed one location at a time: arrival, estimates, distance so far.
public struct TripProgress: Sendable, Equatable, Codable {
    public var destination: Geofence
    public private(set) var arrivedAt: Date?
    public private(set) var odometer = TrackOdometer()
    /// Smoothed reported speed while moving (exponential average, weight 0.3 for the newest).
    public private(set) var observedSpeed: Double?
    public private(set) var lastETAAt: Date?
    public var etaInterval: TimeInterval = 5

    public init(destination: Geofence) { self.destination = destination }

    public mutating func record(_ fix: TrackPoint, model: RouteModel, now: Date) -> [TripSignal] {
        odometer.add(fix)
        if let speed = fix.speed, speed.isFinite, speed >= 1 {
            observedSpeed = observedSpeed.map { 0.7 * $0 + 0.3 * speed } ?? speed
        }
        guard arrivedAt == nil else { return [] }
        if destination.contains(fix.point, accuracy: fix.accuracy ?? 0) {
            arrivedAt = fix.recordedAt
            return [.arrived(at: fix.recordedAt, point: fix.point)]
        }
        if let lastETAAt, now.timeIntervalSince(lastETAAt) < etaInterval { return [] }
        lastETAAt = now
        return [.eta(model.estimate(from: fix.point, to: destination.center, observedSpeed: observedSpeed, now: now))]
    }
}
