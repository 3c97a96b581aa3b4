import Foundation
import Geo
import Roads
import Testing

@testable import RideCtlKit

/// The simulator's drives: on the grid at one speed; on roads at the roads' speeds, with wrong
/// turns that leave the planned way and stops in traffic that make the car late.
@Suite struct SimulatedCityTests {
    let a = GeoPoint(latitude: 60.17, longitude: 24.94)
    var b: GeoPoint { a.destination(bearing: 0, distance: 1000) }
    var c: GeoPoint { b.destination(bearing: 90, distance: 1000) }

    @Test func aGridDriveIsTimedAtTheGridsSpeed() async {
        var random = SystemRandomNumberGenerator()
        let city = CityGrid(center: a, sizeKilometres: 4, speed: 10)
        let leg = await city.drive(from: city.point(east: 0, north: 0), to: city.point(east: 400, north: 600), using: &random)
        #expect(leg.times.count == leg.line.points.count && abs((leg.times.last ?? 0) - 100) < 0.5, "1 000 m at 10 m/s: \(leg.times)")
        #expect(!leg.wrongTurn && leg.trafficStop == 0)
    }

    @Test func aStopInTrafficStandsStillAndDelaysTheRest() {
        var leg = SimulatedLeg(line: Polyline(points: [a, b, c]), times: [0, 100, 200])
        leg.stop(at: 1, for: 90)
        #expect(leg.line.points == [a, b, b, c] && leg.times == [0, 100, 190, 290] && leg.trafficStop == 90)
        leg.stop(at: 9, for: 10)
        #expect(leg.times == [0, 100, 190, 290], "no such point: nothing changes")
    }

    @Test func legsJoinEndToEnd() {
        let first = SimulatedLeg(line: Polyline(points: [a, b]), times: [0, 100])
        let second = SimulatedLeg(line: Polyline(points: [b, c]), times: [0, 50], trafficStop: 5)
        let joined = first.followed(by: second)
        #expect(joined.line.points == [a, b, c] && joined.times == [0, 100, 150] && joined.trafficStop == 5)
    }

    @Test func aRoadCityTakesWrongTurnsAndSitsInTrafficAtItsRates() async {
        var random = SystemRandomNumberGenerator()
        let places = (0..<40).map { a.destination(bearing: Double($0 * 9), distance: 400 + Double($0 * 20)) }
        var city = RoadCity(routes: StraightLineRoutes(), places: places)
        (city.wrongTurnRate, city.trafficRate) = (1, 1)
        let leg = await city.drive(from: a, to: c, using: &random)
        #expect(leg.wrongTurn && leg.trafficStop >= 60, "\(leg)")
        #expect(leg.line.points.first == a && leg.line.points.last == c)
        #expect(zip(leg.times, leg.times.dropFirst()).allSatisfy { $0 <= $1 }, "a timetable that never goes back")
        (city.wrongTurnRate, city.trafficRate) = (0, 0)
        let plain = await city.drive(from: a, to: c, using: &random)
        #expect(!plain.wrongTurn && plain.trafficStop == 0 && plain.line.points.count == 2)
        #expect(places.contains(city.randomPlace(using: &random)))
    }
}
