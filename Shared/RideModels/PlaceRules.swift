import Foundation
import Geo

/// What pickup and dropoff places must be. Each problem names the field.
public enum PlaceRules {
    public static func problem(latitude: Double, longitude: Double, field: String) -> String? {
        guard latitude.isFinite, (-90...90).contains(latitude) else { return "\(field).latitude: must be a number from -90 to 90, got \(latitude)" }
        guard longitude.isFinite, (-180...180).contains(longitude) else { return "\(field).longitude: must be a number from -180 to 180, got \(longitude)" }
        return nil
    }

    /// A single place (a saved one): coordinates and address.
    public static func problem(place: Place, field: String) -> String? {
        if let problem = problem(latitude: place.latitude, longitude: place.longitude, field: field) { return problem }
        if let address = place.address, address.count > 300 { return "\(field).address: must be at most 300 characters" }
        return nil
    }

    public static func problem(pickup: Place, dropoff: Place) -> String? {
        for (place, field) in [(pickup, "pickup"), (dropoff, "dropoff")] {
            if let problem = problem(place: place, field: field) { return problem }
        }
        let distance = GeoPoint(latitude: pickup.latitude, longitude: pickup.longitude).distance(to: GeoPoint(latitude: dropoff.latitude, longitude: dropoff.longitude))
        if distance < 50 { return "dropoff: must be at least 50 m from pickup, is \(Int(distance)) m" }
        return nil
    }
}
