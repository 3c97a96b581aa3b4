import Foundation
import Geo
import RideContract
import RideModels
import Roads
import ServiceKit
import SettingsKit
import Testing

@testable import TripsService

/// A trip following a road route: the estimate measured along it, leaving it re-routes, and a
/// slipping estimate raises one delay per threshold.
@Suite struct RouteFollowingTests {
    let start = Date(timeIntervalSince1970: 1_800_000_000)
    let origin = GeoPoint(latitude: 60.17, longitude: 24.94)
    let model = RouteModel()

    /// 1 km north at 10 m/s, then 1 km east at 5 m/s: 300 s in all.
    var route: Route {
        let corner = origin.destination(bearing: 0, distance: 1000)
        let end = corner.destination(bearing: 90, distance: 1000)
        return Route(
            line: Polyline(points: [origin, corner, end]), distance: 2000, duration: 300,
            steps: [
                RouteStep(name: "North St", distance: 1000, duration: 100, startIndex: 0),
                RouteStep(name: "East St", distance: 1000, duration: 200, startIndex: 1),
            ],
            kind: .road)
    }

    /// The driver's turn by turn: the stretch being driven (what is left of it), each after it
    /// with the turn into it, then the arrival; none for a straight line.
    @Test func theEstimateCarriesTheStepsLeftTurnByTurn() {
        var live = LiveTrip(
            starting: Trip(
                tripID: "t1", shareID: "s1", deviceID: "car", status: .active, startedAt: start,
                destination: .init(geometry: GeoJSONPoint(route.line.points.last!), radius: 30)))
        _ = live.follow(route, model: model, observedFrom: fix(origin, at: 0), now: start)
        let steps = live.trip.estimate?.route.steps
        #expect(
            steps == [
                Trip.Step(name: "North St", manoeuvre: "depart", distance: 1000),
                Trip.Step(name: "East St", manoeuvre: "right", distance: 1000),
                Trip.Step(name: nil, manoeuvre: "arrive", distance: 0),
            ])
        // 1.3 km along: on East St, 700 m of it left.
        let along = route.line.point(atDistance: 1300)
        for signal in live.progress.record(fix(along, at: 130), model: model, now: start.addingTimeInterval(130)) { _ = live.apply(signal) }
        #expect(live.trip.estimate?.route.steps?.map(\.distance) == [700, 0], "\(String(describing: live.trip.estimate?.route.steps))")
        #expect(live.trip.estimate?.route.steps?.first?.name == "East St")

        var straight = LiveTrip(starting: live.trip)
        _ = straight.follow(
            StraightLineRoutes(model: model).line(from: origin, to: route.line.points.last!), model: model,
            observedFrom: fix(origin, at: 0), now: start)
        #expect(straight.trip.estimate?.route.steps == nil, "no streets on a straight line")
    }

    func fix(_ point: GeoPoint, at seconds: Double) -> TrackPoint {
        TrackPoint(point: point, recordedAt: start.addingTimeInterval(seconds), accuracy: 5, speed: 10)
    }

    func following() -> LiveTrip {
        let end = route.line.points[2]
        let trip = Trip(
            tripID: "t-1", shareID: "abcdefg", deviceID: "d-1", status: .active, startedAt: start,
            destination: .init(geometry: GeoJSONPoint(end), radius: 30))
        var live = LiveTrip(starting: trip)
        #expect(
            live.follow(route, model: model, observedFrom: nil, now: start).type == Events.tripETA.type,
            "the first route is the first estimate")
        return live
    }

    @Test func theEstimateIsMeasuredAlongTheRouteWithItsStepsTiming() {
        var live = following()
        guard let estimate = live.trip.estimate else {
            Issue.record("no estimate")
            return
        }
        #expect(estimate.route.distance == 2000 && estimate.route.duration == 300 && estimate.estimateKind == "road")
        #expect(estimate.route.polyline?.coordinates.count == 3, "the way to drive, drawn")
        // Half-way up North St (50 s of its 100), 20 m beside it: 1 500 m and 250 s left.
        let beside = route.line.point(atDistance: 500).destination(bearing: 90, distance: 20)
        let signals = live.progress.record(fix(beside, at: 60), model: model, now: start.addingTimeInterval(60))
        guard case .eta(let eta)? = signals.first else {
            Issue.record("no estimate: \(signals)")
            return
        }
        #expect(abs(eta.distance - 1500) <= 2 && abs(eta.duration - 250) <= 1, "\(eta)")
        // 500 m along East St (100 s of its 200): 500 m and 100 s left.
        let later = live.progress.record(fix(route.line.point(atDistance: 1500), at: 120), model: model, now: start.addingTimeInterval(120))
        guard case .eta(let next)? = later.first else {
            Issue.record("no estimate: \(later)")
            return
        }
        #expect(abs(next.distance - 500) <= 2 && abs(next.duration - 100) <= 1, "\(next)")
        _ = live.apply(.eta(next))
        #expect(live.trip.estimate?.route.polyline?.coordinates.count == 2, "what is left: from here to the end")
    }

    @Test func threeFixesOffTheRouteAskForANewOneWhichIsAReroute() {
        var live = following()
        let off = route.line.point(atDistance: 300).destination(bearing: 270, distance: 120)
        #expect(live.progress.record(fix(off, at: 10), model: model, now: start.addingTimeInterval(10)).allSatisfy { $0.routeStart == nil })
        #expect(live.progress.record(fix(off, at: 11), model: model, now: start.addingTimeInterval(11)).allSatisfy { $0.routeStart == nil })
        let third = live.progress.record(fix(off, at: 12), model: model, now: start.addingTimeInterval(12))
        #expect(third == [.offRoute(at: off)])
        let way = Polyline(points: [off, route.line.points[2]])
        let detour = Route(line: way, distance: way.length, duration: 250, steps: [], kind: .road)
        #expect(live.follow(detour, model: model, observedFrom: nil, now: start.addingTimeInterval(12)).type == Events.tripRerouted.type)
        #expect(live.progress.plan?.reroutes == 1)
        #expect(live.progress.plan?.plannedDistance == 2000, "the first promise is kept")
        #expect(live.trip.estimate?.route.distance == Int(way.length.rounded()) && live.trip.estimate?.route.duration == 250)
        // Back within 50 m (and the fix's accuracy) of a road route: nothing is off.
        let near = route.line.point(atDistance: 300).destination(bearing: 270, distance: 40)
        var again = following()
        for second in 0..<5 {
            let signals = again.progress.record(
                fix(near, at: Double(10 + second)), model: model, now: start.addingTimeInterval(Double(10 + second)))
            #expect(signals.allSatisfy { $0.routeStart == nil })
        }
    }

    @Test func aStoppedCarRaisesOneDelayPerThreshold() {
        var live = following()
        var rules = FollowRules()
        (rules.delaySeconds, rules.delayFraction) = (60, 0.1)  // late past 60 s (and 30 s, 10% of 300)
        let stopped = route.line.point(atDistance: 500)
        var delays: [Int] = []
        for second in stride(from: 5.0, through: 200, by: 5) {
            for signal in live.progress.record(fix(stopped, at: second), model: model, rules: rules, now: start.addingTimeInterval(second))
            {
                if case .delayed(_, let delay) = signal {
                    delays.append(delay)
                    #expect(live.apply(signal)?.type == Events.tripDelayed.type)
                    #expect(live.trip.estimate?.delay == delay)
                }
            }
        }
        // Standing 50 s into the route: every second standing is a second late, from 0 at 50 s.
        #expect(delays.count == 2, "one at 60 s late, one at 120 s: \(delays)")
        #expect(delays.first.map { (60...65).contains($0) } == true, "\(delays)")
    }

    @Test func aStraightLinePlanIsNeverLeftAndEstimatesAtTheObservedSpeed() {
        var progress = TripProgress(destination: Geofence(center: route.line.points[2], radius: 30))
        _ = progress.follow(StraightLineRoutes().line(from: origin, to: route.line.points[2]), model: model, observedFrom: nil, now: start)
        for second in 1...10 {
            let far = origin.destination(bearing: 270, distance: 500)
            let signals = progress.record(fix(far, at: Double(second * 6)), model: model, now: start.addingTimeInterval(Double(second * 6)))
            #expect(signals.allSatisfy { $0.routeStart == nil }, "\(signals)")
        }
    }

    @Test func followRulesFromFlags() throws {
        let rules = try RideTripsCommand.followRules(offRoute: "80", delayAfter: "120,25", environment: [:])
        #expect(rules.offRouteMetres == 80 && rules.delaySeconds == 120 && rules.delayFraction == 0.25)
        #expect(
            try RideTripsCommand.followRules(offRoute: nil, delayAfter: nil, environment: ["RIDE_DELAY_AFTER": "30,0"]).delaySeconds == 30)
        for (off, delay) in [("2", "180,30"), ("x", "180,30"), ("50", "180"), ("50", "0,30"), ("50", "a,b"), ("50", "180,30,1")] {
            #expect(throws: ConfigurationError.self) {
                try RideTripsCommand.followRules(offRoute: off, delayAfter: delay, environment: [:])
            }
        }
    }
}
