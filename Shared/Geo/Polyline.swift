import Wire

/// A path over the Earth (a route, a trip's recorded track), each segment a great-circle arc.
///
/// Coded as `{"points": [{"latitude": …, "longitude": …}, …]}`; use `geoJSONCoordinates` for a
/// GeoJSON `LineString`.
@WireModel
public struct Polyline: Sendable, Hashable, Codable {
    public var points: [GeoPoint]

    public init(points: [GeoPoint]) {
        self.points = points
    }

    /// Reads GeoJSON `LineString` coordinates; fails if any position is malformed.
    public init?(geoJSONCoordinates: [[Double]]) {
        var points: [GeoPoint] = []
        points.reserveCapacity(geoJSONCoordinates.count)
        for position in geoJSONCoordinates {
            guard let point = GeoPoint(coordinates: position) else { return nil }
            points.append(point)
        }
        self.points = points
    }

    /// `[[longitude, latitude], …]`, the GeoJSON `LineString` coordinates.
    public var geoJSONCoordinates: [[Double]] {
        points.map(\.coordinates)
    }

    /// Total length in metres: the sum of the segments' great-circle distances.
    public var length: Double {
        zip(points, points.dropFirst()).reduce(0) { $0 + $1.0.distance(to: $1.1) }
    }

    /// The point `distance` metres along the line. Distances before the start or past the end
    /// (and NaN) clamp to the first or last point.
    ///
    /// - Precondition: the polyline has at least one point; an empty path has no point to give.
    public func point(atDistance distance: Double) -> GeoPoint {
        precondition(!points.isEmpty, "Polyline.point(atDistance:) needs at least one point")
        guard let position = segmentPosition(atDistance: distance) else {
            return distance > 0 ? points[points.count - 1] : points[0]
        }
        let start = points[position.segment]
        // Exactly on a vertex: return it as is rather than a rounded re-computation.
        guard position.offset > 0 else { return start }
        let end = points[position.segment + 1]
        return start.destination(bearing: start.bearing(to: end), distance: position.offset)
    }

    /// The direction of travel, in degrees 0..<360, `distance` metres along the line (clamped to
    /// the line like `point(atDistance:)`). At a vertex it is the bearing of the segment that
    /// starts there; at the very end, the arrival bearing of the last segment. Zero when the line
    /// has no length.
    public func bearing(atDistance distance: Double) -> Double {
        let clamped = distance > 0 ? distance : 0
        let position = segmentPosition(atDistance: clamped) ?? lastSegmentEnd()
        guard let position else { return 0 }
        let start = points[position.segment]
        let end = points[position.segment + 1]
        let here = start.destination(bearing: start.bearing(to: end), distance: position.offset)
        // Take the bearing against whichever end is farther away: a bearing towards a point a
        // hair away is numerically meaningless.
        if position.offset <= position.segmentLength / 2 {
            return here.bearing(to: end)
        }
        return normalizedBearing(here.bearing(to: start) + 180)
    }

    /// The segment holding `distance` (its start point's index) and how far into it, or nil when
    /// `distance` is not strictly inside the line. Zero-length segments are never returned.
    private func segmentPosition(
        atDistance distance: Double
    ) -> (segment: Int, offset: Double, segmentLength: Double)? {
        guard distance >= 0, points.count >= 2 else { return nil }
        var travelled = 0.0
        for segment in 0..<(points.count - 1) {
            let segmentLength = points[segment].distance(to: points[segment + 1])
            if segmentLength > 0, distance < travelled + segmentLength {
                return (segment, distance - travelled, segmentLength)
            }
            travelled += segmentLength
        }
        return nil
    }

    /// The end of the last segment with a length, for `bearing` past the end of the line.
    private func lastSegmentEnd() -> (segment: Int, offset: Double, segmentLength: Double)? {
        guard points.count >= 2 else { return nil }
        for segment in stride(from: points.count - 2, through: 0, by: -1) {
            let segmentLength = points[segment].distance(to: points[segment + 1])
            if segmentLength > 0 { return (segment, segmentLength, segmentLength) }
        }
        return nil
    }
}
