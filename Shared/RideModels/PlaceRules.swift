import Foundation
import Geo

/// What pickup and dropoff must be together (each place's own ranges are its type's `@WireField`s).
public enum PlaceRules {
    public static func problem(pickup: Place, dropoff: Place) -> String? {
        let distance = pickup.point.distance(to: dropoff.point)
        if distance < 50 { return "dropoff: must be at least 50 m from pickup, is \(Int(distance)) m" }
        return nil
    }
}
