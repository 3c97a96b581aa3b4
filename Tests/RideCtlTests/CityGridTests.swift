import Geo
import Testing

@testable import RideCtlKit

@Suite struct CityGridTests {
    let city = CityGrid(center: GeoPoint(latitude: 47.8359, longitude: 35.1146), sizeKilometres: 4)

    @Test func cornersAreOnTheGridInsideTheBox() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<200 {
            let corner = city.randomCorner(using: &generator)
            let north = city.center.distance(to: GeoPoint(latitude: corner.latitude, longitude: city.center.longitude))
            #expect(north <= 2001, "\(north)")
            let east = city.center.distance(to: GeoPoint(latitude: city.center.latitude, longitude: corner.longitude))
            #expect(
                abs(east.truncatingRemainder(dividingBy: 200)) < 1 || abs(east.truncatingRemainder(dividingBy: 200) - 200) < 1, "\(east)")
        }
    }

    @Test func routesFollowTheStreetsWithOneTurn() {
        let start = city.point(east: -600, north: -400)
        let end = city.point(east: 800, north: 600)
        let route = city.route(from: start, to: end, eastFirst: true)
        #expect(route.points.count == 3)
        #expect(abs(route.length - 2400) < 5, "Manhattan length: \(route.length)")
        #expect(city.route(from: start, to: city.point(east: -600, north: 600), eastFirst: true).points.count == 2, "same street: no turn")
    }
}
