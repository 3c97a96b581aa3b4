import Bus
import Foundation
import Geo
import Testing
import Wire

/// Rides that leave the script, through the gateway against the real services: a geofence that has
/// not fired (the driver reports arriving, from near the pickup only, by the phone's position as
/// tracking has it) and a rider who never comes (a no-show, only after the wait; the rider pays
/// the cancellation fee and is told).
@Suite(.serialized) struct OffScriptRideTests {
    @Test func theDriverReportsArrivingFromNearThePickupThenEndsTheRideAsANoShowAfterTheWait() async throws {
        try await withTestBus("off-script") { bus in
            _ = try await TestService.start(on: bus, service: BusContract.Service.notifications, executable: "ride-notifications")
            let apps = try await GatewayIntegrationTests.Apps.start(bus, orders: ["--no-show-wait-s", "4", "--cancellation-fee", "500"])
            let gateway = apps.gateway
            let id = try await apps.bookAndAccept()

            // Neither the rider nor a stranger may report an arrival or a no-show.
            for path in ["arrive", "no-show"] {
                let rider = try await gateway.request("POST", "/v1/orders/\(id)/\(path)", token: apps.rider.token)
                #expect(rider.status == 403, "\(path): \(rider.body)")
            }
            // Dan is 400 m from the pickup: too far to say he is there (the radius is 300 m).
            let far = try await gateway.request("POST", "/v1/orders/\(id)/arrive", token: apps.driver.token)
            #expect(far.status == 409 && far.body["error"]?["code"] == "too_far", "\(far.body)")
            #expect(far.body["error"]?["message"]?.stringValue?.contains("last 400 m from the pickup") == true, "\(far.body)")
            // A no-show before he has even arrived.
            let early = try await gateway.request("POST", "/v1/orders/\(id)/no-show", token: apps.driver.token)
            #expect(early.status == 409 && early.body["error"]?["message"]?.stringValue?.contains("PICKING_UP") == true, "\(early.body)")
            #expect(try await gateway.request("GET", "/v1/orders/\(id)", token: apps.rider.token).body["status"] == "PICKING_UP", "nothing changed")

            // 100 m from the pickup: outside the trip's 30 m geofence, which does not fire; he says he is there.
            let near = GatewayIntegrationTests.pickup.destination(bearing: 180, distance: 100)
            try await apps.drive(Polyline(points: [LifecycleIntegrationTests.driverStart, near]), now: true, batch: 2)
            try await eventually("tracking has Dan 100 m from the pickup", timeout: .seconds(20)) {
                let reply = try await gateway.request("POST", "/v1/orders/\(id)/arrive", token: apps.driver.token)
                return reply.status == 200
            }
            let arrived = try await gateway.request("GET", "/v1/orders/\(id)", token: apps.driver.token)
            #expect(arrived.body["status"] == "REACHED_PICKUP" && arrived.body["arrivals_reported"] == ["pickup"], "\(arrived.body)")
            #expect(arrived.body["reached_pickup_at"]?.stringValue != nil, "\(arrived.body)")
            let again = try await gateway.request("POST", "/v1/orders/\(id)/arrive", token: apps.driver.token)
            #expect(again.status == 200 && again.body["arrivals_reported"] == ["pickup"], "a repeat changes nothing: \(again.body)")

            // The rider has 4 s to come; then the driver may end the ride as a no-show.
            let tooEarly = try await gateway.request("POST", "/v1/orders/\(id)/no-show", token: apps.driver.token)
            #expect(tooEarly.status == 409 && tooEarly.body["error"]?["code"] == "too_early", "\(tooEarly.body)")
            #expect(try await gateway.request("GET", "/v1/orders/\(id)", token: apps.rider.token).body["status"] == "REACHED_PICKUP", "nothing changed")
            try await Task.sleep(for: .seconds(4))
            let noShow = try await gateway.request("POST", "/v1/orders/\(id)/no-show", token: apps.driver.token)
            #expect(noShow.status == 200 && noShow.body["status"] == "CANCELLED" && noShow.body["cancel_reason"] == "no_show", "\(noShow.body)")
            #expect(noShow.body["cancellation_fee"]?["amount_cents"] == 500, "\(noShow.body)")
            let repeated = try await gateway.request("POST", "/v1/orders/\(id)/no-show", token: apps.driver.token)
            // The order as it is now (its trip let go since): the same cancellation, not a second one.
            #expect(repeated.status == 200 && repeated.body["cancelled_at"] == noShow.body["cancelled_at"], "a retry is the order as it is: \(repeated.body)")
            #expect(repeated.body["cancel_reason"] == "no_show" && repeated.body["cancellation_fee"] == noShow.body["cancellation_fee"])

            // The rider pays the fee and is told why.
            try await eventually("the no-show fee is charged", timeout: .seconds(20)) {
                try await gateway.request("GET", "/v1/orders/\(id)/payment", token: apps.rider.token).body["amount_cents"] == 500
            }
            try await eventually("the rider is told", timeout: .seconds(20)) {
                let inbox = try await gateway.request("GET", "/v1/notifications", token: apps.rider.token).body
                return inbox["notifications"]?.arrayValue?.contains { $0["kind"] == "no_show" && $0["body"]?.stringValue?.contains("as a no-show") == true } == true
            }
        }
    }
}
