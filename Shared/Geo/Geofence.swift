import Wire

/// A circle around a place (a pickup point, a trip's destination) that tells when a device arrived.
///
/// ## The accuracy rule
/// A GPS fix comes with an uncertainty radius. `contains(_:accuracy:)` counts a fix as inside when
/// its uncertainty circle overlaps the fence — distance ≤ `radius + accuracy` — because a driver
/// waiting at the door behind tall buildings often reports a fix 50 m off. But a terrible fix
/// (a 2 km cell-tower estimate) must not declare arrival from across town, so the accuracy counts
/// for at most `radius`: the fence can grow to at most twice its size.
@WireModel
public struct Geofence: Sendable, Hashable, Codable {
    public var center: GeoPoint
    /// Metres.
    public var radius: Double

    public init(center: GeoPoint, radius: Double) {
        self.center = center
        self.radius = radius
    }

    /// Whether `point` is within `radius + min(accuracy, radius)` metres of the centre (boundary
    /// included). A negative or NaN accuracy counts as 0.
    public func contains(_ point: GeoPoint, accuracy: Double = 0) -> Bool {
        let allowance = accuracy > 0 ? min(accuracy, radius) : 0
        return center.distance(to: point) <= radius + allowance
    }
}
