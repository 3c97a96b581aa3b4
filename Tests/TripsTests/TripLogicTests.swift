import Bus
import Foundation
import Geo
import RideModels
import Roads
import Testing
import Wire

@testable import TripsService

private let start = Date(timeIntervalSince1970: 1_800_000_000)
private let origin = GeoPoint(latitude: 47.8359, longitude: 35.1146)

/// A drive along `route` at `speed` m/s, one fix a second, each off by up to `noise` metres.
private func drive(_ route: Polyline, speed: Double, noise: Double, seed: UInt64 = 7) -> [TrackPoint] {
    var random = SplitMix(seed: seed)
    var fixes: [TrackPoint] = []
    var travelled = 0.0
    var second = 0.0
    while travelled <= route.length {
        let exact = route.point(atDistance: travelled)
        let off = exact.destination(bearing: random.next() * 360, distance: random.next() * noise)
        fixes.append(TrackPoint(point: off, recordedAt: start.addingTimeInterval(second), accuracy: 5, speed: speed))
        travelled += speed
        second += 1
    }
    return fixes
}

private struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> Double {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return Double((z ^ (z >> 31)) >> 11) / Double(1 << 53)
    }
}

private let streets = Polyline(points: [
    origin, origin.destination(bearing: 90, distance: 800),
    origin.destination(bearing: 90, distance: 800).destination(bearing: 0, distance: 600),
    origin.destination(bearing: 90, distance: 1500).destination(bearing: 0, distance: 600),
])

@Suite struct TrackOdometerTests {
    @Test func aNoisyDriveMeasuresWithinFivePercentOfTheTruePath() {
        let fixes = drive(streets, speed: 10, noise: 4)
        var odometer = TrackOdometer()
        for fix in fixes { odometer.add(fix) }
        #expect(abs(odometer.distance - streets.length) / streets.length < 0.05, "\(odometer.distance) vs \(streets.length)")
    }

    @Test func aParkedPhoneWanderingInItsAccuracyAddsNothing() {
        var odometer = TrackOdometer()
        var random = SplitMix(seed: 3)
        for second in 0..<600 {
            let off = origin.destination(bearing: random.next() * 360, distance: random.next() * 8)
            odometer.add(TrackPoint(point: off, recordedAt: start.addingTimeInterval(Double(second)), accuracy: 10))
        }
        #expect(odometer.distance == 0)
    }

    @Test func lateFixesAndTeleportsAreSkipped() {
        var odometer = TrackOdometer()
        odometer.add(TrackPoint(point: origin, recordedAt: start))
        let moved = odometer.add(TrackPoint(point: origin.destination(bearing: 0, distance: 50), recordedAt: start.addingTimeInterval(5)))
        let older = odometer.add(TrackPoint(point: origin.destination(bearing: 0, distance: 100), recordedAt: start.addingTimeInterval(4)))
        let teleport = odometer.add(
            TrackPoint(point: origin.destination(bearing: 0, distance: 5000), recordedAt: start.addingTimeInterval(6)))
        #expect(moved)
        #expect(!older, "older")
        #expect(!teleport, "5 km in a second")
        #expect(abs(odometer.distance - 50) < 0.5)
    }
}

@Suite struct TripProgressTests {
    let model = RouteModel()
    let destinationPoint = origin.destination(bearing: 0, distance: 2000)

    @Test func arrivalComesOnceAndAllowsForAccuracy() {
        var progress = TripProgress(destination: Geofence(center: destinationPoint, radius: 50))
        // 80 m away with 40 m accuracy: the uncertainty circle overlaps the fence (≤ 50 + 40).
        let near = TrackPoint(point: destinationPoint.destination(bearing: 180, distance: 80), recordedAt: start, accuracy: 40)
        let first = progress.record(near, model: model, now: start)
        #expect(first == [.arrived(at: start, point: near.point)])
        let inside = TrackPoint(point: destinationPoint, recordedAt: start.addingTimeInterval(1), accuracy: 5)
        let again = progress.record(inside, model: model, now: start.addingTimeInterval(1))
        #expect(again == [], "once")
        #expect(progress.arrivedAt == start)
    }

    /// The progress stored on every location is written by hand: the bytes JSONEncoder writes, at each stage of a trip.
    @Test func progressIsWrittenAsJSONEncoderWritesIt() throws {
        var progress = TripProgress(destination: Geofence(center: destinationPoint, radius: 50))
        var stages = [progress]
        for second in 0..<40 {
            let point = origin.destination(bearing: 0, distance: Double(second) * 55)
            let fix = TrackPoint(
                point: point, recordedAt: start.addingTimeInterval(Double(second) + 0.25), accuracy: second.isMultiple(of: 3) ? nil : 4.5,
                speed: second.isMultiple(of: 4) ? nil : 12.25)
            _ = progress.record(fix, model: model, now: start.addingTimeInterval(Double(second)))
            stages.append(progress)
        }
        #expect(progress.arrivedAt != nil && progress.odometer.distance > 1000, "the stages reach arrival")
        let reference = JSONCoding.encoder()
        for stage in stages {
            #expect(String(decoding: stage.jsonBytes, as: UTF8.self) == String(decoding: try reference.encode(stage), as: UTF8.self))
        }
    }

    @Test func aTerribleFixDoesNotArriveFromAcrossTown() {
        var progress = TripProgress(destination: Geofence(center: destinationPoint, radius: 50))
        let far = TrackPoint(point: destinationPoint.destination(bearing: 180, distance: 400), recordedAt: start, accuracy: 2000)
        let signals = progress.record(far, model: model, now: start)
        #expect(signals.allSatisfy { if case .arrived = $0 { false } else { true } })
    }

    @Test func estimatesFollowTheModelAndAreRateLimited() {
        var progress = TripProgress(destination: Geofence(center: destinationPoint, radius: 50))
        let first = TrackPoint(point: origin, recordedAt: start.addingTimeInterval(-10), accuracy: 5, speed: 10)
        #expect(
            progress.record(first, model: model, now: start.addingTimeInterval(-10)) == [.needsRoute(from: origin)],
            "no route yet: one is planned")
        _ = progress.follow(
            StraightLineRoutes().line(from: origin, to: destinationPoint), model: model, observedFrom: first,
            now: start.addingTimeInterval(-10))
        let fix = TrackPoint(point: origin, recordedAt: start, accuracy: 5, speed: 10)
        let signals = progress.record(fix, model: model, now: start)
        guard case .eta(let estimate)? = signals.first else {
            Issue.record("no estimate")
            return
        }
        // 2 000 m × 1.3 at the observed 10 m/s.
        #expect(abs(estimate.distance - 2600) <= 1)
        #expect(estimate.duration == 260)
        #expect(estimate.arriveAt == start.addingTimeInterval(260))
        let soon = TrackPoint(point: origin.destination(bearing: 0, distance: 20), recordedAt: start.addingTimeInterval(2), speed: 10)
        let tooSoon = progress.record(soon, model: model, now: start.addingTimeInterval(2))
        #expect(tooSoon == [], "within 5 s of the last")
        let later = TrackPoint(point: origin.destination(bearing: 0, distance: 60), recordedAt: start.addingTimeInterval(6), speed: 10)
        let next = progress.record(later, model: model, now: start.addingTimeInterval(6))
        #expect(next.count == 1)
    }

    @Test func withoutAnObservedSpeedTheDefaultCitySpeedApplies() {
        let estimate = model.estimate(from: origin, to: destinationPoint, observedSpeed: nil, now: start)
        #expect(estimate.duration == Int((2000 * 1.3 / 8.3).rounded()))
        #expect(
            model.estimate(from: origin, to: destinationPoint, observedSpeed: 0.2, now: start).duration == Int((2600 / 3.0).rounded()),
            "clamped")
    }
}

@Suite struct TripSummaryTests {
    @Test func theSummaryMeasuresTheDrivenPathAndSimplifiesItsRoute() {
        let fixes = drive(streets, speed: 12, noise: 3).shuffled()  // history may come in any order
        let end = start.addingTimeInterval(300)
        let marker = TripSummary.Marker(type: "arrival", recordedAt: end, location: GeoJSONPoint(streets.points.last!))
        let summary = TripSummaryBuilder.summary(track: fixes, deviceID: "d1", startedAt: start, completedAt: end, arrival: marker)
        #expect(abs(Double(summary.distance) - streets.length) / streets.length < 0.05, "\(summary.distance) vs \(streets.length)")
        #expect(summary.duration == 300)
        #expect(
            summary.locations.coordinates.count < fixes.count / 4, "simplified: \(summary.locations.coordinates.count) of \(fixes.count)")
        #expect(summary.locations.coordinates.count >= 4, "keeps the corners")
        #expect(summary.markers == [marker])
    }

    @Test func shareIDsAreSevenUnambiguousCharactersAndARidesTwenty() {
        let ids = (0..<1000).map { _ in ShareID.make() }
        #expect(ids.allSatisfy { ShareID.isValid($0) })
        #expect(Set(ids).count == 1000)
        #expect(!ShareID.isValid("abc0efg") && !ShareID.isValid("abcdef") && !ShareID.isValid("abcdefgh"))
        let rides = (0..<1000).map { _ in ShareID.make(length: ShareID.rideLength) }
        #expect(rides.allSatisfy { $0.count == 20 && ShareID.isValid($0, length: ShareID.rideLength) && !ShareID.isValid($0) })
    }

    /// A trip made without a link (a ride's leg) has no share URL and a share id no link is shaped like.
    @Test func aTripWithoutALinkHasNoShareURL() {
        let destination = Trip.Destination(geometry: GeoJSONPoint(GeoPoint(latitude: 60, longitude: 25)), radius: 30)
        let unshared = Trip(tripID: "t", shareID: "-t", deviceID: "d", status: .active, startedAt: Date(), destination: destination)
        #expect(unshared.views.shareURL == nil && !ShareID.isValid(unshared.shareID))
        let shared = Trip(tripID: "t", shareID: "abcdefg", deviceID: "d", status: .active, startedAt: Date(), destination: destination)
        #expect(shared.views.shareURL == "/abcdefg")
    }
}

@Suite struct CreateTripParamsTests {
    func params(key: String?) -> CreateTripParams {
        CreateTripParams(
            deviceID: "car-1", destination: .init(geometry: GeoJSONPoint(latitude: 47.8, longitude: 35.1)), idempotencyKey: key)
    }

    /// A key means the same on SQLite and PostgreSQL: none with a NUL (PostgreSQL cannot store it).
    @Test func idempotencyKeysAreOneTo200CharactersWithoutNUL() {
        #expect(params(key: "o-1/pickup").ruleViolation == nil)
        #expect(params(key: nil).ruleViolation == nil)
        #expect(params(key: String(repeating: "k", count: 200)).ruleViolation == nil)
        #expect(params(key: "").ruleViolation == "idempotency_key: must not be empty")
        #expect(params(key: String(repeating: "k", count: 201)).ruleViolation == "idempotency_key: must be at most 200 characters")
        #expect(params(key: "o-1\u{0}").ruleViolation == "idempotency_key: must be 1 to 200 characters without NUL")
    }
}

@Suite struct DeviceSilenceTests {
    @Test func aDeviceIsDueAfterTheSilenceFromWhereItWasLastHeard() {
        var silence = DeviceSilence(silence: 10)
        let tripStart = start.addingTimeInterval(-30)
        silence.watch("car", since: tripStart, now: start)
        #expect(silence.due(now: start.addingTimeInterval(9.9)).isEmpty)
        let first = silence.due(now: start.addingTimeInterval(10))
        #expect(first.map(\.deviceID) == ["car"] && first.map(\.from) == [tripStart], "never heard: read from the trip's start")
        #expect(silence.due(now: start.addingTimeInterval(15)).isEmpty, "looked at: not due again within the silence")

        let fix = start.addingTimeInterval(12)
        silence.heard("car", fix: TrackPoint(point: origin, recordedAt: fix), now: start.addingTimeInterval(18))
        // a late fix keeps the newest
        silence.heard("car", fix: TrackPoint(point: origin, recordedAt: start.addingTimeInterval(5)), now: start.addingTimeInterval(19))
        #expect(silence.due(now: start.addingTimeInterval(28)).isEmpty)
        #expect(silence.due(now: start.addingTimeInterval(29)).map(\.from) == [fix])
    }

    @Test func watchingAgainKeepsWhatWasHeardAndForgettingEndsIt() {
        var silence = DeviceSilence(silence: 10)
        silence.watch("car", since: start, now: start)
        silence.heard("car", fix: TrackPoint(point: origin, recordedAt: start.addingTimeInterval(3)), now: start.addingTimeInterval(3))
        silence.watch("car", since: start.addingTimeInterval(4), now: start.addingTimeInterval(4))  // its second trip
        #expect(silence.due(now: start.addingTimeInterval(13)).map(\.from) == [start.addingTimeInterval(3)])
        silence.heard("other", fix: TrackPoint(point: origin, recordedAt: start), now: start)  // not watched: ignored
        silence.forget("car", now: start.addingTimeInterval(50))
        #expect(silence.due(now: start.addingTimeInterval(100)).isEmpty)
    }

    @Test func aDeviceLetGoIsStillHeardBrieflyForItsNextTrip() {
        var silence = DeviceSilence(silence: 10, remembered: 120)
        let fix = TrackPoint(point: origin, recordedAt: start.addingTimeInterval(3))
        silence.watch("car", since: start, now: start)
        silence.heard("car", fix: fix, now: start.addingTimeInterval(3))
        silence.forget("car", now: start.addingTimeInterval(10))
        #expect(silence.isHeard("car") && silence.latest(of: "car") == fix, "let go: its newest location is kept")
        let moved = TrackPoint(point: origin, recordedAt: start.addingTimeInterval(40))
        silence.heard("car", fix: moved, now: start.addingTimeInterval(40))
        silence.heard("car", fix: fix, now: start.addingTimeInterval(41))  // late: the newer one stays
        #expect(silence.latest(of: "car") == moved, "still heard: the location follows the car")
        #expect(silence.due(now: start.addingTimeInterval(100)).isEmpty, "heard, not watched: never due")
        #expect(silence.expired(now: start.addingTimeInterval(129)).isEmpty)
        #expect(silence.expired(now: start.addingTimeInterval(130)) == ["car"], "120 s after its last trip: no longer heard")
        #expect(!silence.isHeard("car") && silence.latest(of: "car") == nil)

        silence.watch("van", since: start, now: start)
        silence.heard("van", fix: fix, now: start)
        silence.forget("van", now: start.addingTimeInterval(1))
        silence.watch("van", since: start.addingTimeInterval(5), now: start.addingTimeInterval(5))  // its next trip
        #expect(silence.latest(of: "van") == fix, "watched again from where it was heard last")
        #expect(silence.expired(now: start.addingTimeInterval(500)).isEmpty, "watched: never expires")
        silence.forget("bike", now: start)  // never watched: nothing to hear
        #expect(!silence.isHeard("bike"))
    }
}
