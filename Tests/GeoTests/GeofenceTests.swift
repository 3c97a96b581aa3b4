import Testing

@testable import Geo

struct GeofenceTests {
    let pickup = GeoPoint(latitude: 48.8566, longitude: 2.3522)
    var fence: Geofence { Geofence(center: pickup, radius: 100) }

    func point(at distance: Double) -> GeoPoint {
        pickup.destination(bearing: 63, distance: distance)
    }

    @Test func containsWithoutAccuracy() {
        #expect(fence.contains(pickup))
        #expect(fence.contains(point(at: 99.9)))
        #expect(!fence.contains(point(at: 100.1)))
        let onTheEdge = point(at: 100)
        #expect(fence.contains(onTheEdge) == (pickup.distance(to: onTheEdge) <= 100))
    }

    @Test func accuracyWidensTheFence() {
        #expect(fence.contains(point(at: 130), accuracy: 40))
        #expect(!fence.contains(point(at: 130), accuracy: 20))
        #expect(fence.contains(point(at: 190), accuracy: 100))
    }

    @Test func accuracyAtMostDoublesTheRadius() {
        #expect(fence.contains(point(at: 199), accuracy: 5_000))
        #expect(!fence.contains(point(at: 201), accuracy: 5_000))
        #expect(!fence.contains(point(at: 201), accuracy: .infinity))
    }

    @Test func meaninglessAccuracyCountsAsZero() {
        #expect(!fence.contains(point(at: 101), accuracy: -50))
        #expect(!fence.contains(point(at: 101), accuracy: .nan))
        #expect(fence.contains(point(at: 99), accuracy: -50))
    }
}
