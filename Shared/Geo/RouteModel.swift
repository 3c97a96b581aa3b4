import Foundation
import Wire

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
        return TripEstimate(
            distance: Int(distance.rounded()), duration: Int(duration.rounded()), arriveAt: now.addingTimeInterval(duration))
    }
}

/// Where the trip stands: distance and time to go, and when it should arrive.
@WireModel
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
}
