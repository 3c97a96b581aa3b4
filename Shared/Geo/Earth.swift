/// The spherical Earth model every computation in `Geo` shares.
///
/// A sphere is accurate to about 0.5 % against the WGS 84 ellipsoid, which is far below GPS noise
/// for "who is nearest" and ETA questions, and keeps every formula closed-form and fast.
public enum Earth {
    /// The IUGG mean radius R₁ in metres; the same value the haversine literature and most map SDKs use,
    /// so our distances agree with theirs to the millimetre.
    public static let meanRadius: Double = 6_371_008.8

    /// Half the circumference: no two points on the sphere are farther apart than this.
    public static let halfCircumference: Double = Double.pi * meanRadius
}

let radiansPerDegree = Double.pi / 180
let degreesPerRadian = 180 / Double.pi
