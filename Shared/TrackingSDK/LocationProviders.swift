import Foundation
import Geo
import RideModels
import Synchronization

/// Where a device's locations come from. The runtime asks for the fix at a time, every
/// `samplingInterval`; nil means no fix now (no signal, nothing to replay yet).
public protocol LocationProvider: Sendable {
    func location(at time: Date) -> DeviceLocation?
}

/// A device standing still (tests, a parked car).
public struct FixedLocation: LocationProvider {
    public var point: GeoPoint
    public var accuracy: Double
    public var mocked: Bool

    public init(_ point: GeoPoint, accuracy: Double = 5, mocked: Bool = true) {
        self.point = point
        self.accuracy = accuracy
        self.mocked = mocked
    }

    public func location(at time: Date) -> DeviceLocation? {
        DeviceLocation(latitude: point.latitude, longitude: point.longitude, recordedAt: time, accuracy: accuracy, speed: 0, mocked: mocked)
    }
}

/// A simulated car: it stands at a point until told to drive along a route — at one speed, or on a
/// timetable (when it passes each point: the roads' speeds, a stop in traffic) — then follows the
/// route and stops at its end. Routes can be given one after another (to the pickup, then to the
/// drop-off). Time can run faster (`speedup`) for simulations. Every fix is marked mocked.
public final class SimulatedDrive: LocationProvider {
    private struct Leg {
        var route: Polyline
        var speed: Double
        var startedAt: Date
        /// Seconds from the start to each point of `route` (nil: at `speed` throughout).
        var times: [Double]?
        /// Metres from the start to each point, with `times`.
        var distances: [Double] = []
    }

    private struct State {
        var position: GeoPoint
        var leg: Leg?
    }

    private let state: Mutex<State>
    public let speedup: Double
    /// Metres of GPS noise added to each fix (0: exact positions).
    public let jitter: Double
    public let accuracy: Double

    public init(at start: GeoPoint, speedup: Double = 1, jitter: Double = 0, accuracy: Double = 5) {
        state = Mutex(State(position: start))
        self.speedup = speedup
        self.jitter = jitter
        self.accuracy = accuracy
    }

    /// Starts driving along `route` (from its first point) at `speed` metres per second.
    public func drive(along route: Polyline, speed: Double, from time: Date = Date()) {
        state.withLock { $0.leg = Leg(route: route, speed: speed, startedAt: time) }
    }

    /// Starts driving along `route` on a timetable: `times[i]` seconds (before the speed-up) after
    /// the start, the car is at point `i`. A point given twice with two times is a stop there.
    /// Times that are not one per point or that go back are refused (the car stays where it is).
    @discardableResult
    public func drive(along route: Polyline, times: [Double], from time: Date = Date()) -> Bool {
        guard times.count == route.points.count, route.points.count >= 2, zip(times, times.dropFirst()).allSatisfy({ $0 <= $1 }) else {
            return false
        }
        var distances = [0.0]
        for (a, b) in zip(route.points, route.points.dropFirst()) { distances.append((distances.last ?? 0) + a.distance(to: b)) }
        state.withLock { $0.leg = Leg(route: route, speed: 0, startedAt: time, times: times, distances: distances) }
        return true
    }

    /// Where the car is at `time`, and whether it has arrived at the end of its current route.
    public func position(at time: Date) -> (point: GeoPoint, bearing: Double?, speed: Double, arrived: Bool) {
        state.withLock { state in
            guard let leg = state.leg, leg.route.points.count >= 2 else { return (state.position, nil, 0, true) }
            if let times = leg.times {
                let elapsed = max(0, time.timeIntervalSince(leg.startedAt)) * speedup
                guard let last = times.last, elapsed < last, let next = times.firstIndex(where: { $0 > elapsed }) else {
                    state.position = leg.route.points[leg.route.points.count - 1]
                    state.leg = nil
                    return (state.position, nil, 0, true)
                }
                guard next > 0 else { return (leg.route.points[0], nil, 0, false) }  // not set off yet
                let (t0, t1, d0, d1) = (times[next - 1], times[next], leg.distances[next - 1], leg.distances[next])
                let travelled = d0 + (d1 - d0) * (elapsed - t0) / (t1 - t0)
                state.position = leg.route.point(atDistance: travelled)
                return (state.position, d1 > d0 ? leg.route.bearing(atDistance: travelled) : nil, (d1 - d0) / (t1 - t0) * speedup, false)
            }
            let travelled = max(0, time.timeIntervalSince(leg.startedAt)) * leg.speed * speedup
            if travelled >= leg.route.length {
                state.position = leg.route.points.last!
                state.leg = nil
                return (state.position, nil, 0, true)
            }
            state.position = leg.route.point(atDistance: travelled)
            return (state.position, leg.route.bearing(atDistance: travelled), leg.speed * speedup, false)
        }
    }

    public func location(at time: Date) -> DeviceLocation? {
        var (point, bearing, speed, _) = position(at: time)
        if jitter > 0 {
            point = point.destination(bearing: Double.random(in: 0..<360), distance: Double.random(in: 0...jitter))
        }
        return DeviceLocation(
            latitude: point.latitude, longitude: point.longitude, recordedAt: time, accuracy: accuracy,
            speed: min(speed, 99), bearing: bearing.map { $0.truncatingRemainder(dividingBy: 360) }, mocked: true)
    }
}

/// Replays a GPX track: its points at their recorded pace (`speedup` times faster), interpolated
/// between points; a track without times is driven at `speedWithoutTimes`. Fixes are marked mocked.
public final class GPXReplay: LocationProvider {
    public let track: GPXTrack
    public let startedAt: Date
    public let speedup: Double
    public let loops: Bool
    private let offsets: [TimeInterval]

    public init(track: GPXTrack, startedAt: Date = Date(), speedup: Double = 1, loops: Bool = false, speedWithoutTimes: Double = 10) {
        self.track = track
        self.startedAt = startedAt
        self.speedup = speedup
        self.loops = loops
        if let first = track.points.first?.time, track.points.allSatisfy({ $0.time != nil }) {
            offsets = track.points.map { $0.time!.timeIntervalSince(first) }
        } else {
            var elapsed = 0.0
            var offsets = [0.0]
            for (a, b) in zip(track.points, track.points.dropFirst()) {
                elapsed += a.point.distance(to: b.point) / speedWithoutTimes
                offsets.append(elapsed)
            }
            self.offsets = offsets
        }
    }

    public convenience init(file path: String, startedAt: Date = Date(), speedup: Double = 1, loops: Bool = false) throws {
        try self.init(track: GPXTrack.parse(contentsOf: path), startedAt: startedAt, speedup: speedup, loops: loops)
    }

    public var duration: TimeInterval { offsets.last ?? 0 }

    public func location(at time: Date) -> DeviceLocation? {
        let points = track.points
        guard let first = points.first else { return nil }
        var elapsed = max(0, time.timeIntervalSince(startedAt)) * speedup
        if loops, duration > 0 { elapsed = elapsed.truncatingRemainder(dividingBy: duration) }
        guard points.count > 1, elapsed < duration else {
            let last = points.last ?? first
            return DeviceLocation(
                latitude: last.point.latitude, longitude: last.point.longitude, recordedAt: time,
                accuracy: 5, speed: 0, altitude: last.elevation, mocked: true)
        }
        // The segment holding `elapsed` (offsets are sorted): binary search.
        var low = 0
        var high = offsets.count - 1
        while high - low > 1 {
            let middle = (low + high) / 2
            if offsets[middle] <= elapsed { low = middle } else { high = middle }
        }
        let a = points[low]
        let b = points[high]
        let span = offsets[high] - offsets[low]
        let fraction = span > 0 ? (elapsed - offsets[low]) / span : 0
        let segment = Polyline(points: [a.point, b.point])
        let point = segment.point(atDistance: segment.length * fraction)
        let speed = span > 0 ? min(99, segment.length / span * speedup) : 0
        var altitude: Double?
        if let from = a.elevation, let to = b.elevation { altitude = from + (to - from) * fraction }
        return DeviceLocation(
            latitude: point.latitude, longitude: point.longitude, recordedAt: time, accuracy: 5, speed: speed,
            bearing: segment.length > 0 ? a.point.bearing(to: b.point) : nil, altitude: altitude, mocked: true)
    }
}
