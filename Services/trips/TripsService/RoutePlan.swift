import Foundation
import Geo
import RideModels
import Roads
import Wire

/// The route a trip follows, with the time to each of its points by the roads' speeds, and what
/// following it has shown so far: how long the device has been off it, how late it runs.
@WireModel
public struct RoutePlan: Sendable, Equatable, Codable {
    public var line: Polyline
    /// Metres from the start to each point of `line`.
    public var distances: [Double]
    /// Seconds from the start to each point of `line`.
    public var times: [Double]
    /// `road` or `straight_line` (`RouteKind`).
    public var kind: String
    /// The arrival the trip's first route promised: delays are measured against it, whatever
    /// re-routes came since.
    public var plannedArrival: Date
    /// Seconds and metres of the first route.
    public var plannedDuration: Double
    public var plannedDistance: Double
    /// Fixes in a row farther from the route than the rules allow.
    public var offRouteFixes: Int = 0
    /// How many delay thresholds the trip has slipped past (each alerted once).
    public var delayLevel: Int = 0
    public var reroutes: Int = 0
    /// The route's stretches with what the driver does where each begins (road routes only;
    /// absent in plans stored before steps were kept).
    public var steps: [PlannedStep]?

    /// Stored with the trip as it is, keys as the Swift names (rows written before keep decoding).
    enum CodingKeys: String, CodingKey {
        case line, distances, times, kind, plannedArrival, plannedDuration, plannedDistance, offRouteFixes, delayLevel, reroutes, steps
    }

    public init(route: Route, now: Date) {
        line = route.line
        (distances, times) = route.timeline
        steps = PlannedStep.steps(of: route, distances: distances)
        kind = route.kind.rawValue
        plannedArrival = now.addingTimeInterval(route.duration)
        plannedDuration = route.duration
        plannedDistance = route.distance
    }

    /// A new route from where the device is, keeping the first promise and the counts.
    public mutating func reroute(_ route: Route) {
        line = route.line
        (distances, times) = route.timeline
        steps = PlannedStep.steps(of: route, distances: distances)
        kind = route.kind.rawValue
        offRouteFixes = 0
        reroutes += 1
    }

    public var distance: Double { distances.last ?? 0 }
    public var duration: Double { times.last ?? 0 }

    /// Metres and seconds left from `position` on the line.
    public func remaining(from position: LinePosition) -> (distance: Double, duration: Double) {
        let segment = min(max(0, position.segment), max(0, distances.count - 2))
        guard distances.count >= 2 else { return (0, 0) }
        let length = distances[segment + 1] - distances[segment]
        let fraction = length > 0 ? min(1, max(0, (position.along - distances[segment]) / length)) : 0
        let elapsed = times[segment] + fraction * (times[segment + 1] - times[segment])
        return (max(0, distance - position.along), max(0, duration - elapsed))
    }

    /// The stretches left from `position`: the one being driven (what is left of it), each after
    /// it, and the arrival; nil without steps.
    public func remainingSteps(from position: LinePosition) -> [Trip.Step]? {
        guard let steps, !steps.isEmpty else { return nil }
        let total = distance
        var left: [Trip.Step] = []
        for (index, step) in steps.enumerated() {
            let end = index + 1 < steps.count ? steps[index + 1].start : total
            guard end > position.along else { continue }
            let metres = end - max(step.start, position.along)
            left.append(Trip.Step(name: step.name, manoeuvre: step.manoeuvre, distance: Int(metres.rounded())))
        }
        return left + [Trip.Step(name: nil, manoeuvre: Manoeuvre.arrive.rawValue, distance: 0)]
    }

    /// The line from `position` to the end: what is left to drive.
    public func remainingLine(from position: LinePosition) -> Polyline {
        let start = line.point(atDistance: position.along)
        let rest = line.points.dropFirst(min(line.points.count, position.segment + 1))
        return Polyline(points: [start] + rest)
    }
}

/// One stretch of a planned route: its street, what the driver does where it begins, and where
/// along the line it begins (metres).
@WireModel
public struct PlannedStep: Sendable, Equatable, Codable {
    public var name: String?
    /// A `Manoeuvre`'s raw value.
    public var manoeuvre: String
    public var start: Double

    /// The stretches of a road route (nil for a straight line: no streets to name or turn into).
    static func steps(of route: Route, distances: [Double]) -> [PlannedStep]? {
        guard route.kind == .road, !distances.isEmpty else { return nil }
        return route.steps.map { step in
            let index = min(max(0, step.startIndex), distances.count - 1)
            return PlannedStep(
                name: step.name, manoeuvre: Manoeuvre.at(index, of: route.line, distances: distances).rawValue, start: distances[index])
        }
    }
}

/// When a trip is off its route and when it runs late (`ride-trips --off-route-m`, `--delay-after`).
public struct FollowRules: Sendable, Equatable {
    /// Metres from the route (beyond the fix's own accuracy, up to 50 m of it) that count as off it.
    public var offRouteMetres: Double = 50
    /// Fixes in a row off the route before the trip is re-routed.
    public var offRouteFixes = 3
    /// A slip is a delay when it exceeds both this many seconds and `delayFraction` of the first
    /// route's duration (so a short pickup is not "late" by 40 s, nor a long ride by 3 minutes).
    public var delaySeconds: Double = 180
    public var delayFraction: Double = 0.3

    public init() {}

    /// The slip, in seconds, that makes the next delay level of a plan.
    func delayThreshold(_ plan: RoutePlan) -> Double { max(1, max(delaySeconds, delayFraction * plan.plannedDuration)) }
}
