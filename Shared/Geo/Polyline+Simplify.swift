#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

extension Polyline {
    /// Douglas–Peucker simplification: drops every point that lies within `tolerance` metres of
    /// the simplified line, keeping the first and last points always. Used to shrink recorded
    /// tracks before they are stored or sent to a rider's app.
    ///
    /// A negative or NaN tolerance keeps every point.
    public func simplified(tolerance: Double) -> Polyline {
        guard points.count > 2, tolerance >= 0 else { return self }
        var keep = [Bool](repeating: false, count: points.count)
        keep[0] = true
        keep[points.count - 1] = true
        // An explicit stack instead of recursion: a long, wiggly track cannot overflow the stack.
        var pending = [(first: 0, last: points.count - 1)]
        while let (first, last) = pending.popLast() {
            guard last - first > 1 else { continue }
            let segment = ProjectedSegment(from: points[first], to: points[last])
            var farthest = first
            var farthestDistance = -1.0
            for index in (first + 1)..<last {
                let distance = segment.distance(to: points[index])
                if distance > farthestDistance {
                    farthest = index
                    farthestDistance = distance
                }
            }
            guard farthestDistance > tolerance else { continue }
            keep[farthest] = true
            pending.append((first, farthest))
            pending.append((farthest, last))
        }
        return Polyline(points: zip(points, keep).filter(\.1).map(\.0))
    }
}

/// A segment in a local equirectangular projection (metres east and north of its start, longitude
/// scaled by the cosine of the segment's mid-latitude). Over the few kilometres between route
/// points the projection's error is far below any sensible tolerance, and it turns the distance to
/// the segment into plane geometry.
private struct ProjectedSegment {
    let origin: GeoPoint
    let metresPerDegreeEast: Double
    let end: (x: Double, y: Double)

    private static let metresPerDegree = Earth.meanRadius * radiansPerDegree

    init(from start: GeoPoint, to end: GeoPoint) {
        origin = start
        let midLatitude = (start.latitude + end.latitude) / 2
        metresPerDegreeEast = Self.metresPerDegree * cos(midLatitude * radiansPerDegree)
        self.end = Self.project(end, origin: start, metresPerDegreeEast: metresPerDegreeEast)
    }

    private static func project(
        _ point: GeoPoint, origin: GeoPoint, metresPerDegreeEast: Double
    ) -> (x: Double, y: Double) {
        // Wrapped, so a segment crossing the antimeridian is short rather than around the world.
        let eastDegrees = normalizedLongitude(point.longitude - origin.longitude)
        return (eastDegrees * metresPerDegreeEast, (point.latitude - origin.latitude) * metresPerDegree)
    }

    /// Distance in metres from `point` to the nearest point of the segment (not of the infinite
    /// line: a point beyond an end is as far as that end, which keeps loops and spikes).
    func distance(to point: GeoPoint) -> Double {
        let p = Self.project(point, origin: origin, metresPerDegreeEast: metresPerDegreeEast)
        let lengthSquared = end.x * end.x + end.y * end.y
        guard lengthSquared > 0 else { return (p.x * p.x + p.y * p.y).squareRoot() }
        let t = min(max((p.x * end.x + p.y * end.y) / lengthSquared, 0), 1)
        let dx = p.x - t * end.x
        let dy = p.y - t * end.y
        return (dx * dx + dy * dy).squareRoot()
    }
}
