import Bus
import Foundation
import Geo
import RideModels
import Testing

@testable import OrdersService

@Suite struct OffScriptRulesTests {
    let rules = OffScriptRules(noShowWait: 300, arrivalRadius: 300)
    let pickup = Place(latitude: 47.8359, longitude: 35.1146)

    @Test func anArrivalIsReportedFromWithinTheRadiusOnly() {
        let center = GeoPoint(latitude: pickup.latitude, longitude: pickup.longitude)
        #expect(rules.arrivalProblem(at: center.destination(bearing: 90, distance: 290), place: pickup, leg: "pickup") == nil)
        let far = rules.arrivalProblem(at: center.destination(bearing: 90, distance: 1200), place: pickup, leg: "pickup")
        #expect(
            far == "the driver's phone was last 1200 m from the pickup; arriving is reported within 300 m of it",
            "\(String(describing: far))")
        #expect(rules.arrivalProblem(at: nil, place: pickup, leg: "dropoff")?.contains("no position of the driver's phone yet") == true)
    }

    /// The destination changes until the driver reaches the drop-off, but not while the ride's
    /// trip to it is being made.
    @Test func theDestinationChangesUntilTheDropoff() throws {
        for status in [OrderStatus.new, .accepted, .pickingUp, .reachedPickup, .droppingOff] {
            try OrdersOps.checkDestinationChange(status)
        }
        for (status, code) in [
            (OrderStatus.startedRide, "not_now"), (.reachedDropoff, "illegal_transition"), (.completed, "illegal_transition"),
            (.cancelled, "illegal_transition"),
        ] {
            #expect(
                performing: { try OrdersOps.checkDestinationChange(status) },
                throws: { ($0 as? ServiceError)?.code == code && ($0 as? ServiceError)?.status == 409 })
        }
    }

    @Test func aNoShowComesAfterTheWait() {
        let reached = Date(timeIntervalSince1970: 1_800_000_000)
        #expect(rules.noShowProblem(reachedAt: reached, now: reached.addingTimeInterval(300)) == nil)
        #expect(
            rules.noShowProblem(reachedAt: reached, now: reached.addingTimeInterval(299.2))
                == "the rider has 1 s more to come: a no-show is called 300 s after reaching the pickup"
        )
        #expect(rules.noShowProblem(reachedAt: reached, now: reached)?.hasPrefix("the rider has 300 s more") == true)
    }
}
