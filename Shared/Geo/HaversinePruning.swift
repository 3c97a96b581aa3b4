#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Trig-free lower bounds on the haversine term `a = sin²(Δφ/2) + cos φ₁ cos φ₂ sin²(Δλ/2)`, to
/// discard cells and points that cannot be near enough before paying for `sin`, `cos` and `atan2`.
///
/// Most candidates of a search lie in the corners of the window or, once `limit` results are in
/// hand, farther than the worst of them; this check costs a dozen multiplications instead of four
/// transcendental calls. Each bound errs on the safe side by a relative 1e-9, millions of times
/// more than rounding, so whatever it discards the exact distance test would have rejected too:
/// results are bit-for-bit those of measuring every point.
struct HaversinePruning {
    let centerCosLatitude: Double
    /// A point whose `a` surely exceeds this is farther than the current threshold distance.
    private(set) var limit: Double

    private static let relativeMargin = 1e-9

    init(center: DistanceOrigin, threshold distance: Double) {
        centerCosLatitude = center.cosLatitude
        limit = Self.limit(forDistance: distance)
    }

    /// Lowers the threshold, typically to the worst of the results kept so far.
    mutating func tighten(to distance: Double) {
        limit = min(limit, Self.limit(forDistance: distance))
    }

    /// - Parameters: gaps are lower bounds of |Δφ| (0...π) and |Δλ| (0...π) in radians;
    ///   `cosLatitude` a lower bound of cos φ₂.
    @inline(__always)
    func isSurelyBeyond(latitudeGap: Double, longitudeGap: Double, cosLatitude: Double) -> Bool {
        let latitudeTerm = Self.halfAngleSineLowerBound(latitudeGap)
        let longitudeTerm = Self.halfAngleSineLowerBound(longitudeGap)
        let a = latitudeTerm * latitudeTerm + centerCosLatitude * cosLatitude * longitudeTerm * longitudeTerm
        return a > limit
    }

    /// sin(angle / 2) ≥ x − x³/6 with x = angle / 2 (the Taylor series alternates), and the bound
    /// stays non-negative for x ≤ π/2, so its square bounds sin² from below.
    @inline(__always)
    private static func halfAngleSineLowerBound(_ angle: Double) -> Double {
        let x = angle / 2
        return x - x * x * x / 6
    }

    /// `a` grows with distance: a = sin²(d / 2R) for d up to half the circumference.
    private static func limit(forDistance distance: Double) -> Double {
        let halfAngle = distance / (2 * Earth.meanRadius)
        guard halfAngle < Double.pi / 2 * (1 - relativeMargin) else { return .infinity }
        let sine = sin(halfAngle)
        return sine * sine * (1 + relativeMargin)
    }
}
