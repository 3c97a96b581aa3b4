import Bus
import Foundation
import Geo
import RideModels

/// What a rider sees of the cars near a point before booking: positions only (no device, name or
/// user), nearest first, and the nearest's pickup estimate by the route model fare estimates use
/// (the straight line times its road factor, at its default speed: a parked car shows no speed).
public enum NearbyCarsRules {
    /// The cars among tracking's available devices: only drivers' devices (with the `user_id`
    /// dispatch looks for), at most `NearbyCarsParams.maxCars`, nearest first.
    public static func cars(_ devices: [NearbyDevice], to point: GeoPoint, model: RouteModel, now: Date) -> NearbyCars {
        let drivers = devices.filter { $0.metadata["user_id"]?.stringValue != nil }.sorted { $0.distance < $1.distance }.prefix(
            NearbyCarsParams.maxCars)
        let cars = drivers.map {
            NearbyCar(latitude: $0.location.point.latitude, longitude: $0.location.point.longitude, bearing: $0.bearing)
        }
        let pickup = drivers.first.map { model.estimate(from: $0.location.point, to: point, observedSpeed: nil, now: now) }
        return NearbyCars(count: cars.count, cars: Array(cars), pickupETASeconds: pickup?.duration, pickupDistanceMetres: pickup?.distance)
    }

    /// The dropoff to quote, when the params give one: both coordinates or neither (422 naming the missing one).
    public static func dropoff(_ params: NearbyCarsParams) throws -> Place? {
        switch (params.dropoffLatitude, params.dropoffLongitude) {
        case (nil, nil): return nil
        case (let latitude?, let longitude?): return Place(latitude: latitude, longitude: longitude)
        case (nil, _?): throw ServiceError.unprocessable("invalid_params", "dropoff_latitude: required with dropoff_longitude")
        case (_?, nil): throw ServiceError.unprocessable("invalid_params", "dropoff_longitude: required with dropoff_latitude")
        }
    }
}
