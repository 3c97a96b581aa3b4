import Wire

#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A position on the Earth in degrees (WGS 84 latitude and longitude, treated as a sphere).
///
/// Coded as `{"latitude": …, "longitude": …}`; use `coordinates` for GeoJSON's `[lon, lat]`.
@WireModel
public struct GeoPoint: Sendable, Hashable, Codable {
    public var latitude: Double
    public var longitude: Double

    public init(latitude: Double, longitude: Double) {
        self.latitude = latitude
        self.longitude = longitude
    }

    /// Whether this is a real place: finite, latitude in -90...90 and longitude in -180...180.
    /// Decoding does not check this, so validate anything that came from a device.
    public var isValid: Bool {
        latitude.isFinite && longitude.isFinite
            && (-90...90).contains(latitude) && (-180...180).contains(longitude)
    }

    /// Great-circle (haversine) distance in metres on a sphere of radius `Earth.meanRadius`.
    public func distance(to other: GeoPoint) -> Double {
        DistanceOrigin(self).distance(toLatitude: other.latitude, longitude: other.longitude)
    }

    /// Initial bearing (forward azimuth) towards `other`, in degrees clockwise from north, 0..<360.
    /// The bearing changes along a great circle, so this holds only at the start. Zero for the
    /// same point.
    public func bearing(to other: GeoPoint) -> Double {
        let fromLatitude = latitude * radiansPerDegree
        let toLatitude = other.latitude * radiansPerDegree
        let longitudeDelta = (other.longitude - longitude) * radiansPerDegree
        let y = sin(longitudeDelta) * cos(toLatitude)
        let x =
            cos(fromLatitude) * sin(toLatitude)
            - sin(fromLatitude) * cos(toLatitude) * cos(longitudeDelta)
        return normalizedBearing(atan2(y, x) * degreesPerRadian)
    }

    /// The point reached by travelling `distance` metres along the great circle that starts here
    /// with `bearing` degrees. The longitude is normalised to -180...180.
    public func destination(bearing: Double, distance: Double) -> GeoPoint {
        let angularDistance = distance / Earth.meanRadius
        let course = bearing * radiansPerDegree
        let fromLatitude = latitude * radiansPerDegree
        let sinToLatitude =
            sin(fromLatitude) * cos(angularDistance)
            + cos(fromLatitude) * sin(angularDistance) * cos(course)
        let toLatitude = asin(min(max(sinToLatitude, -1), 1))
        let longitudeDelta = atan2(
            sin(course) * sin(angularDistance) * cos(fromLatitude),
            cos(angularDistance) - sin(fromLatitude) * sinToLatitude
        )
        return GeoPoint(
            latitude: toLatitude * degreesPerRadian,
            longitude: normalizedLongitude(longitude + longitudeDelta * degreesPerRadian)
        )
    }
}

/// Maps any angle in degrees to 0..<360.
func normalizedBearing(_ degrees: Double) -> Double {
    let wrapped = degrees.truncatingRemainder(dividingBy: 360)
    let positive = wrapped < 0 ? wrapped + 360 : wrapped
    // -1e-15 + 360 rounds to 360, which is outside the promised range.
    return positive >= 360 ? 0 : positive
}

/// Maps any longitude in degrees to -180...180.
func normalizedLongitude(_ degrees: Double) -> Double {
    degrees.remainder(dividingBy: 360)
}
