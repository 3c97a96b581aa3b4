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
            #expect(
                try await gateway.request("GET", "/v1/orders/\(id)", token: apps.rider.token).body["status"] == "PICKING_UP",
                "nothing changed")

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
            #expect(
                try await gateway.request("GET", "/v1/orders/\(id)", token: apps.rider.token).body["status"] == "REACHED_PICKUP",
                "nothing changed")
            try await Task.sleep(for: .seconds(4))
            let noShow = try await gateway.request("POST", "/v1/orders/\(id)/no-show", token: apps.driver.token)
            #expect(
                noShow.status == 200 && noShow.body["status"] == "CANCELLED" && noShow.body["cancel_reason"] == "no_show", "\(noShow.body)")
            #expect(noShow.body["cancellation_fee"]?["amount_cents"] == 500, "\(noShow.body)")
            let repeated = try await gateway.request("POST", "/v1/orders/\(id)/no-show", token: apps.driver.token)
            // The order as it is now (its trip let go since): the same cancellation, not a second one.
            #expect(
                repeated.status == 200 && repeated.body["cancelled_at"] == noShow.body["cancelled_at"],
                "a retry is the order as it is: \(repeated.body)")
            #expect(repeated.body["cancel_reason"] == "no_show" && repeated.body["cancellation_fee"] == noShow.body["cancellation_fee"])

            // The rider pays the fee and is told why.
            try await eventually("the no-show fee is charged", timeout: .seconds(20)) {
                try await gateway.request("GET", "/v1/orders/\(id)/payment", token: apps.rider.token).body["amount_cents"] == 500
            }
            try await eventually("the rider is told", timeout: .seconds(20)) {
                let inbox = try await gateway.request("GET", "/v1/notifications", token: apps.rider.token).body
                return inbox["notifications"]?.arrayValue?.contains {
                    $0["kind"] == "no_show" && $0["body"]?.stringValue?.contains("as a no-show") == true
                } == true
            }
        }
    }
}

extension OffScriptRideTests {
    /// The rider changes the drop-off twice, through the gateway against the real services: on the
    /// way to the pickup (the order only), then on the ride (the dropoff trip heads there: the old
    /// drop-off passes without an arrival). Each time a fare quote, both told, both sockets hear it.
    @Test func theRiderChangesTheDestinationBeforeAndDuringTheRide() async throws {
        try await withTestBus("destination-change") { bus in
            _ = try await TestService.start(on: bus, service: BusContract.Service.notifications, executable: "ride-notifications")
            let apps = try await GatewayIntegrationTests.Apps.start(bus)
            let gateway = apps.gateway
            let id = try await apps.bookAndAccept()
            let (riderLive, driverLive) = (apps.live(id, token: apps.rider.token), apps.live(id, token: apps.driver.token))
            try await eventually("both sockets are open") { riderLive.statuses == ["PICKING_UP"] && driverLive.statuses == ["PICKING_UP"] }
            let ride = LifecycleIntegrationTests.ride.points
            let (corner, booked) = (ride[1], ride[2])
            func body(_ point: GeoPoint, _ address: String) -> String {
                #"{"dropoff":{"latitude":\#(point.latitude),"longitude":\#(point.longitude),"address":"\#(address)"}}"#
            }

            // Only the rider may, and only with one new drop-off.
            let byDriver = try await gateway.request(
                "POST", "/v1/orders/\(id)/destination", token: apps.driver.token, body(corner, "Corner 1"))
            #expect(byDriver.status == 403, "\(byDriver.body)")
            for bad in [
                #"{}"#, #"{"dropoff":{"latitude":91,"longitude":0},"dropoff_place_id":"p"}"#,
                #"{"dropoff":{"latitude":"north","longitude":0}}"#,
            ] {
                let reply = try await gateway.request("POST", "/v1/orders/\(id)/destination", token: apps.rider.token, bad)
                #expect(reply.status == 422, "\(bad): \(reply.body)")
            }
            #expect(
                try await gateway.request("GET", "/v1/orders/\(id)", token: apps.rider.token).body["fare_quote"] == nil, "nothing changed")
            let pickupRoute = try await gateway.request("GET", "/v1/orders/\(id)/route", token: apps.driver.token)
            #expect(pickupRoute.status == 200 && pickupRoute.body["trip_id"] != nil, "on the way to the pickup: \(pickupRoute.body)")

            // On the way to the pickup: the order's drop-off is the corner now.
            let first = try await gateway.request("POST", "/v1/orders/\(id)/destination", token: apps.rider.token, body(corner, "Corner 1"))
            #expect(
                first.status == 200 && first.body["dropoff"]?["address"] == "Corner 1" && first.body["status"] == "PICKING_UP",
                "\(first.body)")
            let quoted = first.body["fare_quote"]?["distance_m"]?.numberValue ?? 0
            #expect(quoted >= 600 && first.body["fare_quote"]?["total_cents"]?.numberValue ?? 0 > 0, "\(first.body["fare_quote"] ?? .null)")
            let again = try await gateway.request("POST", "/v1/orders/\(id)/destination", token: apps.rider.token, body(corner, "Corner 1"))
            #expect(again.status == 200 && again.body["version"] == first.body["version"], "a repeat changes nothing: \(again.body)")

            // On the ride: back to the booked drop-off, 500 m past the corner.
            try await apps.drive(
                Polyline(points: [LifecycleIntegrationTests.driverStart, GatewayIntegrationTests.pickup]), now: true, batch: 2)
            try await apps.status(of: id, is: "REACHED_PICKUP")
            #expect(try await gateway.request("POST", "/v1/orders/\(id)/start", token: apps.driver.token).status == 200)
            try await apps.status(of: id, is: "DROPPING_OFF")
            let second = try await gateway.request(
                "POST", "/v1/orders/\(id)/destination", token: apps.rider.token, body(booked, "Far End 5"))
            #expect(second.status == 200 && second.body["dropoff"]?["address"] == "Far End 5", "\(second.body)")
            #expect(second.body["fare_quote"]?["distance_m"]?.numberValue ?? 0 > quoted, "farther: \(second.body["fare_quote"] ?? .null)")
            // The driver's navigation heads for the new drop-off at once.
            let navigation = try await gateway.request("GET", "/v1/orders/\(id)/route", token: apps.driver.token)
            #expect(navigation.status == 200 && navigation.body["destination"]?["address"] == "Far End 5", "\(navigation.body)")
            #expect(
                navigation.body["estimate"]?["route"]?["distance"]?.numberValue ?? 0 > 600,
                "from the car to the far end: \(navigation.body)")
            try await apps.drive(Polyline(points: Array(ride[0...1])), now: true, batch: 3)
            try await Task.sleep(for: .seconds(2))
            #expect(
                try await gateway.request("GET", "/v1/orders/\(id)", token: apps.rider.token).body["status"] == "DROPPING_OFF",
                "the corner is no longer the drop-off")
            try await apps.drive(Polyline(points: Array(ride[1...2])), now: true, batch: 4)
            try await apps.status(of: id, is: "REACHED_DROPOFF")
            let late = try await gateway.request("POST", "/v1/orders/\(id)/destination", token: apps.rider.token, body(corner, "Corner 1"))
            #expect(late.status == 409, "at the drop-off: \(late.body)")

            // Both heard each change on their sockets and in their inboxes.
            for (who, live) in [("rider", riderLive), ("driver", driverLive)] {
                try await eventually("the \(who)'s socket heard both changes") {
                    live.received.filter { $0["type"] == "destination_changed" }.compactMap {
                        $0["order"]?["dropoff"]?["address"]?.stringValue
                    } == ["Corner 1", "Far End 5"]
                }
            }
            #expect(riderLive.received.contains { $0["type"] == "destination_changed" && $0["fare_quote"]?["total_cents"] != nil })
            // With the change comes a new ETA, from the car (at the pickup) to the far end (trips tells
            // it as the trip turns, just before orders tells the change itself).
            let farEnd = GatewayIntegrationTests.pickup.distance(to: booked) * RouteModel().roadFactor
            for (who, live) in [("rider", riderLive), ("driver", driverLive)] {
                let distances = live.received.filter { $0["type"] == "eta" }.compactMap {
                    $0["estimate"]?["route"]?["distance"]?.numberValue
                }
                #expect(
                    distances.contains { abs($0 - farEnd) < 20 }, "the \(who)'s ETA for the new drop-off, \(Int(farEnd)) m: \(distances)")
            }
            for (who, token) in [("rider", apps.rider.token), ("driver", apps.driver.token)] {
                try await eventually("the \(who) is told twice", timeout: .seconds(20)) {
                    let inbox = try await gateway.request("GET", "/v1/notifications", token: token).body
                    return inbox["notifications"]?.arrayValue?.filter { $0["kind"] == "destination_changed" }.count == 2
                }
            }
            riderLive.close()
            driverLive.close()
        }
    }
}
