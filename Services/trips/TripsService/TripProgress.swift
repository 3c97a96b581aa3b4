import Foundation
import Geo
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
