import Foundation
import Geo
import Roads

/// OSRM's answer to `/route/v1/…?overview=full&geometries=geojson&steps=true`, as its HTTP API
/// documents it: `code` (`Ok`, or why not: `NoRoute`, `NoSegment`, …), and on `Ok` the routes,
/// each with its GeoJSON line, metres, seconds and legs of steps.
struct OSRMResponse: Decodable {
    struct Geometry: Decodable { var coordinates: [[Double]] }
    struct Step: Decodable {
        var name: String?
        var distance: Double
        var duration: Double
        var geometry: Geometry?
    }
    struct Leg: Decodable { var steps: [Step]? }
    struct Route: Decodable {
        var distance: Double
        var duration: Double
        var geometry: Geometry
        var legs: [Leg]?
    }

    var code: String
    var message: String?
    var routes: [Route]?

    /// The route asked for from `start` to `end`, or the `RouteError` the answer means.
    func route(from start: GeoPoint, to end: GeoPoint) throws(RouteError) -> Roads.Route {
        switch code {
        case "Ok": break
        case "NoSegment":
            // "Could not find a matching segment for coordinate 1": which end has no road.
            throw RouteError.outsideRoadData(message?.hasSuffix("coordinate 1") == true ? end : start)
        case "NoRoute": throw RouteError.unroutable(from: start, to: end)
        default: throw RouteError.unavailable("OSRM answered \(code)\(message.map { ": \($0)" } ?? "")")
        }
        guard let first = routes?.first else { throw RouteError.unavailable("OSRM answered Ok without a route") }
        guard let line = Polyline(geoJSONCoordinates: first.geometry.coordinates), line.points.count >= 2,
            line.points.allSatisfy(\.isValid),
            first.distance.isFinite, first.distance >= 0, first.duration.isFinite, first.duration >= 0
        else { throw RouteError.unavailable("OSRM answered a route with a malformed geometry, distance or duration") }
        return Roads.Route(
            line: line, distance: first.distance, duration: first.duration, steps: steps(of: first, points: line.points.count), kind: .road)
    }

    /// One step per OSRM step, its start found by counting the steps' own points (each step's
    /// line begins where the one before ended). Without steps, the route is one step.
    private func steps(of route: Route, points: Int) -> [RouteStep] {
        let osrmSteps = (route.legs ?? []).flatMap { $0.steps ?? [] }
        guard !osrmSteps.isEmpty else { return [RouteStep(name: nil, distance: route.distance, duration: route.duration, startIndex: 0)] }
        var index = 0
        return osrmSteps.map { step in
            defer { index += max((step.geometry?.coordinates.count ?? 1) - 1, 0) }
            return RouteStep(
                name: step.name.flatMap { $0.isEmpty ? nil : $0 }, distance: step.distance, duration: step.duration,
                startIndex: min(index, points - 1))
        }
    }
}
