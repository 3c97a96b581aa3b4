import Geo

/// A simulated city: a square box of streets on a grid of `block`-metre blocks, with routes that
/// follow the streets (along one street, then along the crossing one) — close enough to driving
/// for dispatch, estimates, arrivals and summaries to be exercised as on real roads.
struct CityGrid: Sendable {
    let center: GeoPoint
    /// Side of the box in metres.
    let size: Double
    let block: Double
    /// Metres per second the cars drive (before the speed-up).
    let speed: Double

    init(center: GeoPoint, sizeKilometres: Double, block: Double = 200, speed: Double = 10) {
        self.center = center
        self.size = sizeKilometres * 1000
        self.block = block
        self.speed = speed
    }

    /// The point `east` and `north` metres from the centre.
    func point(east: Double, north: Double) -> GeoPoint {
        center.destination(bearing: 90, distance: east).destination(bearing: 0, distance: north)
    }

    /// A random street corner in the box.
    func randomCorner(using generator: inout some RandomNumberGenerator) -> GeoPoint {
        let blocks = Int(size / block / 2)
        return point(
            east: Double(Int.random(in: -blocks...blocks, using: &generator)) * block,
            north: Double(Int.random(in: -blocks...blocks, using: &generator)) * block)
    }

    /// A route along the streets from `start` to `end`: first east–west or north–south (a coin),
    /// then the other way. Its length is the Manhattan distance, about 1.27 times the straight line
    /// on average — the road factor trips assume (1.3).
    func route(from start: GeoPoint, to end: GeoPoint, eastFirst: Bool) -> Polyline {
        let corner =
            eastFirst
            ? GeoPoint(latitude: start.latitude, longitude: end.longitude) : GeoPoint(latitude: end.latitude, longitude: start.longitude)
        var points = [start]
        if corner.distance(to: start) > 1, corner.distance(to: end) > 1 { points.append(corner) }
        points.append(end)
        return Polyline(points: points)
    }
}
