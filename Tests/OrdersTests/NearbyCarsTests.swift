import Bus
import Foundation
import Geo
import OrdersService
import RideModels
import Testing

/// What a rider sees of the cars near a point: positions only, nearest first, the nearest's pickup
/// estimate by the fare estimates' route model, and a dropoff given whole or not at all.
@Suite struct NearbyCarsTests {
    static let point = GeoPoint(latitude: 47.8359, longitude: 35.1146)

    static func device(_ id: String, latitude: Double, distance: Double, driver: Bool = true, bearing: Double? = nil) -> NearbyDevice {
        NearbyDevice(
            deviceID: id, name: "Dan", distance: distance, location: GeoJSONPoint(latitude: latitude, longitude: point.longitude),
            available: true, tracking: true,
            lastSeen: nil, metadata: driver ? ["user_id": .string("d-\(id)")] : [:], bearing: bearing)
    }

    @Test func carsArePositionsNearestFirstWithTheNearestsPickupEstimate() throws {
        let far = Self.device("far", latitude: 47.8449, distance: 1000, bearing: 90)
        let near = Self.device("near", latitude: 47.8314, distance: 500)
        let notADriver = Self.device("kiosk", latitude: 47.836, distance: 10, driver: false)
        let model = RouteModel()
        let cars = NearbyCarsRules.cars([far, notADriver, near], to: Self.point, model: model, now: Date())
        #expect(cars.count == 2 && cars.cars.count == 2, "only drivers' devices: \(cars)")
        #expect(
            cars.cars == [
                NearbyCar(latitude: 47.8314, longitude: Self.point.longitude),
                NearbyCar(latitude: 47.8449, longitude: Self.point.longitude, bearing: 90),
            ])
        let metres = GeoPoint(latitude: 47.8314, longitude: Self.point.longitude).distance(to: Self.point) * model.roadFactor
        #expect(cars.pickupDistanceMetres == Int(metres.rounded()))
        #expect(cars.pickupETASeconds == Int((metres / model.defaultSpeed).rounded()), "the default city speed, as fare estimates")
        let json = String(decoding: try JSONEncoder().encode(cars), as: UTF8.self)
        for identity in ["near", "far", "Dan", "device", "user_id", "name"] { #expect(!json.contains(identity), "\(identity) in \(json)") }

        let none = NearbyCarsRules.cars([notADriver], to: Self.point, model: model, now: Date())
        #expect(none == NearbyCars(count: 0, cars: []), "no ETA without a car")
        let many = (0..<30).map { Self.device("d\($0)", latitude: 47.8 + Double($0) / 1000, distance: Double($0)) }
        #expect(NearbyCarsRules.cars(many, to: Self.point, model: model, now: Date()).count == NearbyCarsParams.maxCars)
    }

    @Test func aDropoffComesWithBothCoordinatesOrNotAtAll() throws {
        func params(_ latitude: Double?, _ longitude: Double?) -> NearbyCarsParams {
            NearbyCarsParams(caller: .rider("r1"), latitude: 47.8, longitude: 35.1, dropoffLatitude: latitude, dropoffLongitude: longitude)
        }
        #expect(try NearbyCarsRules.dropoff(params(nil, nil)) == nil)
        #expect(try NearbyCarsRules.dropoff(params(47.84, 35.12)) == Place(latitude: 47.84, longitude: 35.12))
        #expect(throws: ServiceError.unprocessable("invalid_params", "dropoff_latitude: required with dropoff_longitude")) {
            try NearbyCarsRules.dropoff(params(nil, 35.12))
        }
        #expect(throws: ServiceError.unprocessable("invalid_params", "dropoff_longitude: required with dropoff_latitude")) {
            try NearbyCarsRules.dropoff(params(47.84, nil))
        }
    }
}
