import Foundation
import Wire

/// Where a point lies against a line: how far along the line its nearest point is, and how far
/// the point is from the line there.
@WireModel
public struct LinePosition: Sendable, Equatable, Codable {
    /// Metres from the line's start to the point's nearest point on it.
    public var along: Double
    /// Metres from the point to the line.
    public var offset: Double
    /// The segment the nearest point is on (the index of its start point).
    public var segment: Int

    public init(along: Double, offset: Double, segment: Int) {
        self.along = along
        self.offset = offset
        self.segment = segment
    }
}

extension Polyline {
    /// The point's position against the line (nil for a line without points). Each segment is
    /// projected in a local flat frame around its start — exact enough for segments of a few
    /// kilometres, which is what road routes are made of.
    public func locate(_ point: GeoPoint) -> LinePosition? {
        guard let first = points.first else { return nil }
        guard points.count >= 2 else { return LinePosition(along: 0, offset: point.distance(to: first), segment: 0) }
        var best: LinePosition?
        var travelled = 0.0
        for segment in 0..<(points.count - 1) {
            let (start, end) = (points[segment], points[segment + 1])
            let length = start.distance(to: end)
            let fraction = Self.projection(of: point, from: start, to: end)
            let nearest = length > 0 ? start.destination(bearing: start.bearing(to: end), distance: fraction * length) : start
            let offset = point.distance(to: nearest)
            if best.map({ offset < $0.offset }) ?? true {
                best = LinePosition(along: travelled + fraction * length, offset: offset, segment: segment)
            }
            travelled += length
        }
        return best
    }

    /// How far along the segment (0…1) the point's perpendicular foot is, in a local
    /// equirectangular frame (longitudes scaled by the cosine of the latitude).
    static func projection(of point: GeoPoint, from start: GeoPoint, to end: GeoPoint) -> Double {
        let scale = cos(start.latitude * .pi / 180)
        let (dx, dy) = ((end.longitude - start.longitude) * scale, end.latitude - start.latitude)
        let (px, py) = ((point.longitude - start.longitude) * scale, point.latitude - start.latitude)
        let squared = dx * dx + dy * dy
        guard squared > 0 else { return 0 }
        return min(1, max(0, (px * dx + py * dy) / squared))
    }
}
