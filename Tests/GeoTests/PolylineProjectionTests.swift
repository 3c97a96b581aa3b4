import Foundation
import Testing

@testable import Geo

/// `Polyline.locate`: how far along a route a driver is, and how far off it.
@Suite struct PolylineProjectionTests {
    // An L: 1 km north, then 1 km east (Helsinki's latitude, where the flat frame matters).
    let corner = GeoPoint(latitude: 60.17, longitude: 24.94).destination(bearing: 0, distance: 1000)
    var line: Polyline {
        let start = GeoPoint(latitude: 60.17, longitude: 24.94)
        return Polyline(points: [start, corner, corner.destination(bearing: 90, distance: 1000)])
    }

    @Test func aPointOnTheLineIsAtItsDistanceAlongWithNoOffset() throws {
        for along in [0.0, 250, 999, 1000, 1500, 2000] {
            let position = try #require(line.locate(line.point(atDistance: along)))
            #expect(abs(position.along - along) < 0.5, "\(along): \(position)")
            #expect(position.offset < 0.5)
        }
    }

    @Test func aPointBesideTheLineIsProjectedOntoTheNearestSegment() throws {
        // 40 m west of the first segment's middle, then 60 m north of the second's middle.
        let west = line.point(atDistance: 500).destination(bearing: 270, distance: 40)
        let position = try #require(line.locate(west))
        #expect(abs(position.along - 500) < 1 && abs(position.offset - 40) < 1 && position.segment == 0, "\(position)")
        let north = line.point(atDistance: 1500).destination(bearing: 0, distance: 60)
        let second = try #require(line.locate(north))
        #expect(abs(second.along - 1500) < 1 && abs(second.offset - 60) < 1 && second.segment == 1, "\(second)")
    }

    @Test func pointsBeyondTheEndsClampToThem() throws {
        let before = GeoPoint(latitude: 60.17, longitude: 24.94).destination(bearing: 180, distance: 300)
        #expect(try #require(line.locate(before)).along == 0)
        #expect(abs(try #require(line.locate(before)).offset - 300) < 1)
        let beyond = line.points[2].destination(bearing: 90, distance: 200)
        #expect(abs(try #require(line.locate(beyond)).along - 2000) < 1)
    }

    @Test func degenerateLines() {
        #expect(Polyline(points: []).locate(corner) == nil)
        #expect(Polyline(points: [corner]).locate(corner) == LinePosition(along: 0, offset: 0, segment: 0))
        #expect(Polyline(points: [corner, corner]).locate(corner)?.offset == 0, "a zero-length segment")
    }
}
