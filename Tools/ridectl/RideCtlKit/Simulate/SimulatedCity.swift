import Cities
import Foundation
import Geo
import Roads

/// Where a simulation's cars drive: random places to book rides between, and the drive from one
/// place to another — its line and when the car passes each point.
protocol SimulatedCity: Sendable {
    func randomPlace(using generator: inout some RandomNumberGenerator) -> GeoPoint
    func drive(from start: GeoPoint, to end: GeoPoint, using generator: inout some RandomNumberGenerator) async -> SimulatedLeg
}

/// One drive of a simulated car.
struct SimulatedLeg: Sendable, Equatable {
    var line: Polyline
    /// Seconds (before the speed-up) from the start to each point of `line`.
    var times: [Double]
    /// A wrong turn was taken on the way (the trip should be re-routed).
    var wrongTurn = false
    /// Seconds the car stands in traffic on the way (0: none).
    var trafficStop: Double = 0
}

extension CityGrid: SimulatedCity {
    func randomPlace(using generator: inout some RandomNumberGenerator) -> GeoPoint { randomCorner(using: &generator) }

    /// Along the grid's streets at `speed`, east–west or north–south first (a coin).
    func drive(from start: GeoPoint, to end: GeoPoint, using generator: inout some RandomNumberGenerator) async -> SimulatedLeg {
        let line = route(from: start, to: end, eastFirst: Bool.random(using: &generator))
        var times = [0.0]
        for (a, b) in zip(line.points, line.points.dropFirst()) { times.append((times.last ?? 0) + a.distance(to: b) / speed) }
        return SimulatedLeg(line: line, times: times)
    }
}

/// A city of real streets: places are points of the road data, drives are routes at the roads'
/// speeds. Now and then a driver takes a wrong turn (drives to a point off the route first, so the
/// trip is re-routed) or stands in traffic for a while (so the trip runs late).
struct RoadCity: SimulatedCity {
    let routes: any RouteProvider
    /// Where riders book between (points on the roads).
    let places: [GeoPoint]
    var wrongTurnRate = 0.1
    var trafficRate = 0.1
    /// How long a traffic stop lasts, in seconds (before the speed-up).
    var trafficStop: ClosedRange<Double> = 60...180

    func randomPlace(using generator: inout some RandomNumberGenerator) -> GeoPoint {
        places.randomElement(using: &generator) ?? GeoPoint(latitude: 0, longitude: 0)
    }

    func drive(from start: GeoPoint, to end: GeoPoint, using generator: inout some RandomNumberGenerator) async -> SimulatedLeg {
        var leg = await SimulatedLeg(route(from: start, to: end))
        if Double.random(in: 0..<1, using: &generator) < wrongTurnRate, leg.line.points.count >= 2 {
            // Off the planned way: to a place 300–600 m aside of the first half, then on from there.
            let aside = leg.line.point(atDistance: leg.line.length * Double.random(in: 0.1...0.5, using: &generator))
                .destination(
                    bearing: Double.random(in: 0..<360, using: &generator), distance: Double.random(in: 300...600, using: &generator))
            let detour = nearestPlace(to: aside)
            let first = await SimulatedLeg(route(from: start, to: detour))
            let second = await SimulatedLeg(route(from: detour, to: end))
            leg = first.followed(by: second)
            leg.wrongTurn = true
        }
        if Double.random(in: 0..<1, using: &generator) < trafficRate, leg.line.points.count >= 3 {
            leg.stop(
                at: Int.random(in: 1..<(leg.line.points.count - 1), using: &generator),
                for: Double.random(in: trafficStop, using: &generator))
        }
        return leg
    }

    /// The platform's city: the bundle `RIDE_CITY` names (the services' too), else built-in central
    /// Helsinki; nil (logged by the caller's fallback) when it cannot be read.
    static func current() -> RoadCity? {
        let path = ProcessInfo.processInfo.environment["RIDE_CITY"].flatMap { $0.isEmpty ? nil : $0 }
        guard let bundle = try? CitySetting(path: path, origin: "RIDE_CITY").load() else { return nil }
        return RoadCity(routes: bundle.routes, places: bundle.roads.points)
    }

    func route(from start: GeoPoint, to end: GeoPoint) async -> Route {
        do {
            return try await routes.route(from: start, to: end)
        } catch {
            return StraightLineRoutes().line(from: start, to: end)
        }
    }

    func nearestPlace(to point: GeoPoint) -> GeoPoint {
        places.min { $0.distance(to: point) < $1.distance(to: point) } ?? point
    }
}

extension SimulatedLeg {
    init(_ route: Route) {
        self.init(line: route.line, times: route.timeline.times)
    }

    /// This leg, then `next` from where this one ends.
    func followed(by next: SimulatedLeg) -> SimulatedLeg {
        let offset = times.last ?? 0
        return SimulatedLeg(
            line: Polyline(points: line.points + next.line.points.dropFirst()), times: times + next.times.dropFirst().map { $0 + offset },
            wrongTurn: wrongTurn || next.wrongTurn, trafficStop: trafficStop + next.trafficStop)
    }

    /// Stands still at point `index` for `seconds`.
    mutating func stop(at index: Int, for seconds: Double) {
        guard line.points.indices.contains(index), seconds > 0 else { return }
        var points = line.points
        points.insert(points[index], at: index + 1)
        line = Polyline(points: points)
        times.insert(times[index] + seconds, at: index + 1)
        for later in (index + 2)..<times.count { times[later] += seconds }
        trafficStop += seconds
    }
}
