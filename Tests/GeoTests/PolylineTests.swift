import Foundation
import Testing

@testable import Geo

struct PolylineTests {
    /// East along the equator for one degree, then north for one degree.
    let corner = Polyline(points: [
        GeoPoint(latitude: 0, longitude: 0),
        GeoPoint(latitude: 0, longitude: 1),
        GeoPoint(latitude: 1, longitude: 1),
    ])
    let oneDegree = Earth.meanRadius * Double.pi / 180

    @Test func lengthSumsTheSegments() {
        #expect(abs(corner.length - 2 * oneDegree) < 1e-6)
        #expect(abs(corner.length - 222_390.16) < 0.01)
        #expect(Polyline(points: []).length == 0)
        #expect(Polyline(points: [corner.points[0]]).length == 0)
    }

    @Test func interpolatesAlongTheLine() {
        #expect(corner.point(atDistance: 0) == corner.points[0])
        #expect(corner.point(atDistance: corner.length) == corner.points[2])
        let halfway = corner.point(atDistance: oneDegree / 2)
        #expect(abs(halfway.latitude) < 1e-9 && abs(halfway.longitude - 0.5) < 1e-9)
        let upTheSecondLeg = corner.point(atDistance: oneDegree * 1.5)
        #expect(abs(upTheSecondLeg.latitude - 0.5) < 1e-9 && abs(upTheSecondLeg.longitude - 1) < 1e-9)
        let atTheCorner = corner.point(atDistance: corner.points[0].distance(to: corner.points[1]))
        #expect(abs(atTheCorner.latitude) < 1e-9 && abs(atTheCorner.longitude - 1) < 1e-9)
    }

    @Test func interpolationClampsToTheEnds() {
        #expect(corner.point(atDistance: -50) == corner.points[0])
        #expect(corner.point(atDistance: .nan) == corner.points[0])
        #expect(corner.point(atDistance: corner.length + 1_000) == corner.points[2])
        let single = Polyline(points: [GeoPoint(latitude: 3, longitude: 4)])
        #expect(single.point(atDistance: 10) == single.points[0])
    }

    @Test func interpolationFollowsTheGreatCircleOverTheAntimeridian() {
        let line = Polyline(points: [GeoPoint(latitude: 0, longitude: 179.5), GeoPoint(latitude: 0, longitude: -179.5)])
        #expect(abs(line.length - oneDegree) < 1e-6)
        let middle = line.point(atDistance: line.length / 2)
        #expect(abs(abs(middle.longitude) - 180) < 1e-9)
    }

    @Test func skipsZeroLengthSegments() {
        let line = Polyline(points: [
            GeoPoint(latitude: 0, longitude: 0), GeoPoint(latitude: 0, longitude: 0), GeoPoint(latitude: 0, longitude: 1),
        ])
        let middle = line.point(atDistance: oneDegree / 2)
        #expect(abs(middle.longitude - 0.5) < 1e-9)
        #expect(abs(line.bearing(atDistance: 0) - 90) < 1e-9)
    }

    @Test func bearingFollowsTheSegments() {
        #expect(abs(corner.bearing(atDistance: 0) - 90) < 1e-9)
        #expect(abs(corner.bearing(atDistance: oneDegree * 0.9) - 90) < 1e-9)
        #expect(abs(corner.bearing(atDistance: oneDegree * 1.5) - 0) < 1e-9)
        // At the corner itself, the direction of the leg that starts there.
        let corner1 = corner.points[0].distance(to: corner.points[1])
        #expect(abs(corner.bearing(atDistance: corner1) - 0) < 1e-9)
        #expect(abs(corner.bearing(atDistance: corner.length) - 0) < 1e-9)
        #expect(abs(corner.bearing(atDistance: corner.length * 2) - 0) < 1e-9)
        #expect(abs(corner.bearing(atDistance: -1) - 90) < 1e-9)
        #expect(Polyline(points: [corner.points[0]]).bearing(atDistance: 0) == 0)
    }

    @Test func bearingChangesAlongALongGreatCircle() {
        // New York to Paris leaves north-east (53.7°) and arrives heading east-south-east (111.8°).
        let route = Polyline(points: [GeoPoint(latitude: 40.7128, longitude: -74.006), GeoPoint(latitude: 48.8566, longitude: 2.3522)])
        #expect(abs(route.bearing(atDistance: 0) - 53.70) < 0.01)
        #expect(abs(route.bearing(atDistance: route.length) - 111.79) < 0.01)
        let midway = route.bearing(atDistance: route.length / 2)
        #expect(midway > 60 && midway < 110)
    }

    @Test func simplificationDropsCollinearPoints() {
        let straight = Polyline(points: (0...10).map { GeoPoint(latitude: 0, longitude: Double($0) / 1_000) })
        let simplified = straight.simplified(tolerance: 1)
        #expect(simplified.points == [straight.points[0], straight.points[10]])
    }

    @Test func simplificationKeepsDeviationsLargerThanTheTolerance() {
        // A zig-zag: every other point 0.001° (111 m) north of the line.
        let zigZag = Polyline(
            points: (0...10).map {
                GeoPoint(latitude: $0 % 2 == 0 ? 0 : 0.001, longitude: Double($0) / 1_000)
            })
        #expect(zigZag.simplified(tolerance: 50).points == zigZag.points)
        #expect(zigZag.simplified(tolerance: 200).points == [zigZag.points[0], zigZag.points[10]])
    }

    @Test func simplificationKeepsTheFarthestPointOfABump() {
        // A tent: the peak is 334 m off the base line, the others ~5 m off the sides of the tent.
        let bump = Polyline(points: [
            GeoPoint(latitude: 0, longitude: 0),
            GeoPoint(latitude: 0.00155, longitude: 0.001),
            GeoPoint(latitude: 0.003, longitude: 0.002),
            GeoPoint(latitude: 0.00145, longitude: 0.003),
            GeoPoint(latitude: 0, longitude: 0.004),
        ])
        #expect(bump.simplified(tolerance: 20).points == [bump.points[0], bump.points[2], bump.points[4]])
        #expect(bump.simplified(tolerance: 2).points == bump.points)
        #expect(bump.simplified(tolerance: 400).points == [bump.points[0], bump.points[4]])
    }

    @Test func simplificationKeepsEndsAndShortLines() {
        let loop = Polyline(points: [
            GeoPoint(latitude: 0, longitude: 0), GeoPoint(latitude: 0, longitude: 0.01), GeoPoint(latitude: 0, longitude: 0),
        ])
        // The loop's end is its start: the far point is measured from that point, not dropped.
        #expect(loop.simplified(tolerance: 100).points == loop.points)
        let two = Polyline(points: Array(corner.points.prefix(2)))
        #expect(two.simplified(tolerance: 1_000_000) == two)
        #expect(corner.simplified(tolerance: -1) == corner)
        #expect(Polyline(points: []).simplified(tolerance: 10).points.isEmpty)
    }

    @Test func simplificationWorksAcrossTheAntimeridian() {
        let line = Polyline(points: [
            GeoPoint(latitude: 0, longitude: 179.99), GeoPoint(latitude: 0.00001, longitude: 180),
            GeoPoint(latitude: 0, longitude: -179.99),
        ])
        #expect(line.simplified(tolerance: 5).points.count == 2)
        #expect(line.simplified(tolerance: 0.5).points.count == 3)
    }

    @Test func geoJSONCoordinates() {
        #expect(corner.geoJSONCoordinates == [[0, 0], [1, 0], [1, 1]])
        #expect(Polyline(geoJSONCoordinates: [[0, 0], [1, 0], [1, 1]]) == corner)
        #expect(Polyline(geoJSONCoordinates: [[0, 0], [200, 0]]) == nil)
    }

    @Test func codableRoundTrip() throws {
        let data = try JSONEncoder().encode(corner)
        #expect(try JSONDecoder().decode(Polyline.self, from: data) == corner)
    }
}
