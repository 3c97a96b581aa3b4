import Geo
import Roads

/// Turns pgRouting's edges, in the order driven, into a `Route`: one line, one step per run of
/// edges on the same street.
enum PgRoutingPath {
    struct Edge {
        var name: String?
        var distance: Double
        var duration: Double
        /// The edge's geometry in the direction driven.
        var points: [GeoPoint]
    }

    static func route(_ edges: [Edge]) -> Route {
        var points: [GeoPoint] = []
        var steps: [RouteStep] = []
        for edge in edges {
            let startIndex = max(points.count - 1, 0)
            // Consecutive edges share their joining vertex; keep it once.
            points.append(contentsOf: points.last == edge.points.first ? edge.points.dropFirst() : edge.points[...])
            let name = edge.name.flatMap { $0.isEmpty ? nil : $0 }
            if let last = steps.last, last.name == name {
                steps[steps.count - 1].distance += edge.distance
                steps[steps.count - 1].duration += edge.duration
            } else {
                steps.append(RouteStep(name: name, distance: edge.distance, duration: edge.duration, startIndex: startIndex))
            }
        }
        if points.count == 1 { points.append(points[0]) }
        return Route(
            line: Polyline(points: points), distance: steps.reduce(0) { $0 + $1.distance }, duration: steps.reduce(0) { $0 + $1.duration },
            steps: steps,
            kind: .road)
    }
}
