import Foundation
import Geo

extension Route {
    /// Metres and seconds from the start to each point of the line: each step's duration spread
    /// over its points by distance — when a car following the route passes each point.
    public var timeline: (distances: [Double], times: [Double]) {
        let points = line.points
        var distances = [0.0]
        for (a, b) in zip(points, points.dropFirst()) { distances.append((distances.last ?? 0) + a.distance(to: b)) }
        var times = [Double](repeating: 0, count: points.count)
        guard !points.isEmpty else { return ([], []) }
        let steps = steps.isEmpty ? [RouteStep(name: nil, distance: distance, duration: duration, startIndex: 0)] : steps
        var elapsed = 0.0
        for (index, step) in steps.enumerated() {
            let first = min(max(0, step.startIndex), points.count - 1)
            let last = index + 1 < steps.count ? min(max(first, steps[index + 1].startIndex), points.count - 1) : points.count - 1
            let span = distances[last] - distances[first]
            if last > first {
                for point in (first + 1)...last {
                    let share = span > 0 ? (distances[point] - distances[first]) / span : 1
                    times[point] = elapsed + share * step.duration
                }
            }
            elapsed += step.duration
        }
        return (distances, times)
    }
}
