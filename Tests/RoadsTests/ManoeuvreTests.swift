import Foundation
import Geo
import Roads
import Testing

/// What a driver does where a step begins, read from the line's bends.
@Suite struct ManoeuvreTests {
    @Test func aChangeOfHeadingIsNamedBySizeAndSide() {
        #expect(Manoeuvre.turn(from: 0, to: 10) == .straight)
        #expect(Manoeuvre.turn(from: 0, to: 45) == .slightRight)
        #expect(Manoeuvre.turn(from: 0, to: 270) == .left, "-90°, across north")
        #expect(Manoeuvre.turn(from: 350, to: 80) == .right, "+90°, across north")
        #expect(Manoeuvre.turn(from: 90, to: 240) == .sharpRight)
        #expect(Manoeuvre.turn(from: 90, to: 300) == .sharpLeft)
        #expect(Manoeuvre.turn(from: 0, to: 180) == .uTurn)
    }

    @Test func aLinesCornersAreItsTurnsWithADepartureAndAnArrival() {
        let origin = GeoPoint(latitude: 60.17, longitude: 24.94)
        let corner = origin.destination(bearing: 90, distance: 200)
        // East, then north with a bend drawn as two short segments 3 m apart: one left turn.
        let bend = corner.destination(bearing: 45, distance: 3)
        let end = bend.destination(bearing: 0, distance: 200)
        let line = Polyline(points: [origin, corner, bend, end])
        var distances = [0.0]
        for (a, b) in zip(line.points, line.points.dropFirst()) { distances.append(distances.last! + a.distance(to: b)) }
        #expect(Manoeuvre.at(0, of: line, distances: distances) == .depart)
        #expect(Manoeuvre.at(1, of: line, distances: distances) == .left)
        #expect(Manoeuvre.at(3, of: line, distances: distances) == .arrive)
    }
}
