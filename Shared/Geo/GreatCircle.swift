#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A point whose trigonometry is computed once, so that a search can measure many distances from
/// the same centre cheaply.
///
/// `GeoPoint.distance(to:)` goes through this type too: a spatial query and a brute-force check
/// therefore run the very same floating-point operations and agree to the last bit, which is what
/// makes "a point at exactly the radius is included" a dependable promise.
struct DistanceOrigin {
    let latitudeRadians: Double
    let longitudeRadians: Double
    let cosLatitude: Double

    init(_ point: GeoPoint) {
        latitudeRadians = point.latitude * radiansPerDegree
        longitudeRadians = point.longitude * radiansPerDegree
        cosLatitude = cos(latitudeRadians)
    }

    /// Haversine distance in metres. The `atan2` form stays accurate for antipodal points, where
    /// the `asin` form loses half its digits.
    @inline(__always)
    func distance(toLatitude latitude: Double, longitude: Double) -> Double {
        let otherLatitude = latitude * radiansPerDegree
        let halfLatitudeSine = sin((otherLatitude - latitudeRadians) / 2)
        // No need to wrap the longitude difference: sin² of half the difference has period 2π.
        let halfLongitudeSine = sin((longitude * radiansPerDegree - longitudeRadians) / 2)
        let a =
            halfLatitudeSine * halfLatitudeSine
            + cosLatitude * cos(otherLatitude) * halfLongitudeSine * halfLongitudeSine
        let clamped = min(max(a, 0), 1)
        return 2 * Earth.meanRadius * atan2(clamped.squareRoot(), (1 - clamped).squareRoot())
    }

    /// |Δφ| and |Δλ| in radians (both 0...π, Δλ taken the short way round), computed exactly as
    /// `distance` computes them, for `HaversinePruning`.
    @inline(__always)
    func gaps(toLatitude latitude: Double, longitude: Double) -> (latitude: Double, longitude: Double) {
        let latitudeGap = abs(latitude * radiansPerDegree - latitudeRadians)
        let longitudeDifference = abs(longitude * radiansPerDegree - longitudeRadians)
        return (latitudeGap, longitudeDifference > .pi ? 2 * .pi - longitudeDifference : longitudeDifference)
    }
}
