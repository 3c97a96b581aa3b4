import Foundation
import Testing

@testable import Geo

struct GeoPointTests {
    @Test func oneDegreeOfLatitude() {
        let distance = GeoPoint(latitude: 0, longitude: 0).distance(to: GeoPoint(latitude: 1, longitude: 0))
        #expect(abs(distance - 111_195) <= 1)
        // Along a meridian the haversine distance is exactly R·Δφ.
        #expect(abs(distance - Earth.meanRadius * Double.pi / 180) < 1e-6)
    }

    @Test func londonToParis() {
        let london = GeoPoint(latitude: 51.5074, longitude: -0.1278)
        let paris = GeoPoint(latitude: 48.8566, longitude: 2.3522)
        #expect(abs(london.distance(to: paris) - 343_500) <= 1_000)
        #expect(london.distance(to: paris) == paris.distance(to: london))
    }

    @Test func antipodesAreHalfACircumferenceApart() {
        let pairs = [
            (GeoPoint(latitude: 0, longitude: 0), GeoPoint(latitude: 0, longitude: 180)),
            (GeoPoint(latitude: 10, longitude: 20), GeoPoint(latitude: -10, longitude: -160)),
            (GeoPoint(latitude: 90, longitude: 0), GeoPoint(latitude: -90, longitude: 0)),
        ]
        // Haversine keeps only about half its digits right at the antipode: ±1 m, not ±1 µm.
        for (a, b) in pairs {
            #expect(abs(a.distance(to: b) - 20_015_114) <= 1)
        }
        #expect(Earth.halfCircumference > 20_015_114 && Earth.halfCircumference < 20_015_115)
    }

    @Test func distanceAcrossTheAntimeridianIsShort() {
        let east = GeoPoint(latitude: 0, longitude: 179.999)
        let west = GeoPoint(latitude: 0, longitude: -179.999)
        #expect(abs(east.distance(to: west) - 222.39) < 0.01)
        #expect(GeoPoint(latitude: 0, longitude: 180).distance(to: GeoPoint(latitude: 0, longitude: -180)) < 1e-6)
    }

    @Test func distanceToItselfIsZero() {
        let point = GeoPoint(latitude: 48.85, longitude: 2.35)
        #expect(point.distance(to: point) == 0)
    }

    @Test func bearingsToTheCardinalDirections() {
        let origin = GeoPoint(latitude: 0, longitude: 0)
        #expect(abs(origin.bearing(to: GeoPoint(latitude: 1, longitude: 0)) - 0) < 1e-9)
        #expect(abs(origin.bearing(to: GeoPoint(latitude: 0, longitude: 1)) - 90) < 1e-9)
        #expect(abs(origin.bearing(to: GeoPoint(latitude: -1, longitude: 0)) - 180) < 1e-9)
        #expect(abs(origin.bearing(to: GeoPoint(latitude: 0, longitude: -1)) - 270) < 1e-9)
        // Eastwards over the antimeridian, not westwards around the world.
        let east = GeoPoint(latitude: 0, longitude: 179)
        #expect(abs(east.bearing(to: GeoPoint(latitude: 0, longitude: -179)) - 90) < 1e-9)
        // London to Paris heads south-east, about 148°.
        let london = GeoPoint(latitude: 51.5074, longitude: -0.1278)
        let paris = GeoPoint(latitude: 48.8566, longitude: 2.3522)
        #expect(abs(london.bearing(to: paris) - 148.1) < 0.5)
    }

    @Test func bearingStaysBelow360() {
        #expect(normalizedBearing(-1e-15) == 0)
        #expect(normalizedBearing(360) == 0)
        #expect(normalizedBearing(-90) == 270)
        #expect(normalizedBearing(725) == 5)
    }

    @Test func destinationRoundTrip() {
        var random = SplitMix64(seed: 7)
        for _ in 0..<500 {
            let start = GeoPoint(
                latitude: Double.random(in: -80...80, using: &random),
                longitude: Double.random(in: -180...180, using: &random)
            )
            let bearing = Double.random(in: 0..<360, using: &random)
            let distance = exp(Double.random(in: log(1.0)...log(10_000_000.0), using: &random))
            let end = start.destination(bearing: bearing, distance: distance)
            #expect(end.isValid)
            #expect(abs(start.distance(to: end) - distance) <= distance * 1e-6)
            var bearingError = abs(start.bearing(to: end) - bearing)
            bearingError = min(bearingError, 360 - bearingError)
            #expect(bearingError < 1e-6)
        }
    }

    @Test func destinationWrapsTheLongitude() {
        let start = GeoPoint(latitude: 0, longitude: 179.5)
        let end = start.destination(bearing: 90, distance: 111_195.08)
        #expect(abs(end.latitude) < 1e-9)
        #expect(abs(end.longitude - -179.5) < 1e-6)
        let backwards = GeoPoint(latitude: 0, longitude: -179.5).destination(bearing: 270, distance: 111_195.08)
        #expect(abs(backwards.longitude - 179.5) < 1e-6)
    }

    @Test func destinationFromThePoleGoesSouth() {
        let end = GeoPoint(latitude: 90, longitude: 0).destination(bearing: 180, distance: 111_195.08)
        #expect(abs(end.latitude - 89) < 1e-6)
    }

    @Test func validity() {
        #expect(GeoPoint(latitude: 90, longitude: 180).isValid)
        #expect(GeoPoint(latitude: -90, longitude: -180).isValid)
        #expect(!GeoPoint(latitude: 90.0001, longitude: 0).isValid)
        #expect(!GeoPoint(latitude: 0, longitude: -180.0001).isValid)
        #expect(!GeoPoint(latitude: .nan, longitude: 0).isValid)
        #expect(!GeoPoint(latitude: 0, longitude: .infinity).isValid)
    }

    @Test func geoJSONCoordinatesAreLongitudeFirst() {
        let point = GeoPoint(latitude: 48.85, longitude: 2.35)
        #expect(point.coordinates == [2.35, 48.85])
        #expect(GeoPoint(coordinates: [2.35, 48.85]) == point)
        #expect(GeoPoint(coordinates: [2.35, 48.85, 35]) == point)
        #expect(GeoPoint(coordinates: [2.35]) == nil)
        #expect(GeoPoint(coordinates: [2.35, 48.85, 35, 1]) == nil)
        // [lat, lon] by mistake: 120 is no latitude.
        #expect(GeoPoint(coordinates: [10, 120]) == nil)
    }

    @Test func codableUsesNamedFields() throws {
        let point = GeoPoint(latitude: 48.5, longitude: 2.25)
        let json = String(decoding: try JSONEncoder().encode(point), as: UTF8.self)
        #expect(json.contains("\"latitude\":48.5"))
        #expect(json.contains("\"longitude\":2.25"))
        #expect(try JSONDecoder().decode(GeoPoint.self, from: Data(json.utf8)) == point)
    }
}
