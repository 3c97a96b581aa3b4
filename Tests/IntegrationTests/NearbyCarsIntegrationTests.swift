import Foundation
import Geo
import HummingbirdWSClient
import Logging
import Testing
import Wire

/// `GET /v1/drivers/nearby` and `watch_nearby` on `/v1/me/live`, through the gateway and the real
/// users, tracking, trips and orders: a rider sees two drivers' cars and nothing about who drives them.
@Suite(.serialized) struct NearbyCarsIntegrationTests {
    static let pickup = GatewayIntegrationTests.pickup
    static let point = "latitude=\(pickup.latitude)&longitude=\(pickup.longitude)"

    @Test func aRiderSeesTwoCarsTheNearestsETAAndAQuoteButNotWhoDrivesThem() async throws {
        try await withTestBus("gateway-nearby") { bus in
            let apps = try await GatewayIntegrationTests.Apps.start(bus)
            let gateway = apps.gateway
            // Eve goes online 1 km north of the point, heading south; Dan is 400 m south (Apps).
            let eve = try await gateway.signUp(
                #"{"role":"driver","name":"Eve","phone_number":"+380671110002","password":"driving9","device_id":"gw-eve-phone","car":{"model":"Leaf","license_plate":"AB 5678"}}"#,
                phone: "+380671110002", password: "driving9")
            #expect(try await gateway.request("PUT", "/v1/me/availability", token: eve.token, #"{"available":true}"#).status == 200)
            let north = Self.pickup.destination(bearing: 0, distance: 1000)
            let fix =
                #"{"latitude":\#(north.latitude),"longitude":\#(north.longitude),"recorded_at":"\#(RFC3339.format(Date()))","accuracy":5,"bearing":180}"#
            let posted = try await gateway.request(
                "POST", "/v1/devices/gw-eve-phone/locations", token: eve.token, #"{"batch_id":1,"locations":[\#(fix)]}"#)
            #expect(posted.status == 200, "\(posted.body)")

            let rider = apps.rider.token
            try await eventually("the rider sees both cars") {
                try await gateway.request("GET", "/v1/drivers/nearby?\(Self.point)", token: rider).body["count"] == .number(2)
            }
            let seen = try await gateway.request("GET", "/v1/drivers/nearby?\(Self.point)", token: rider)
            #expect(seen.status == 200)
            let cars = seen.body["cars"]?.arrayValue ?? []
            #expect(cars.count == 2, "\(seen.body)")
            #expect(
                cars.last?["bearing"] == .number(180)
                    && cars.last?["latitude"]?.numberValue.map { abs($0 - north.latitude) < 1e-6 } == true, "Eve's car, farther")
            let text = String(decoding: try JSONCoding.encode(seen.body), as: UTF8.self)
            for identity in ["gw-dan-phone", "gw-eve-phone", "Dan", "Eve", apps.driver.id, eve.id, "device_id", "user_id", "name"] {
                #expect(!text.contains(identity), "\(identity) in \(text)")
            }
            let metres = LifecycleIntegrationTests.driverStart.distance(to: Self.pickup) * RouteModel().roadFactor
            #expect(seen.body["pickup_distance_m"] == .number(metres.rounded()), "Dan's, the nearest: \(seen.body)")
            #expect(seen.body["pickup_eta_s"] == .number((metres / RouteModel().defaultSpeed).rounded()))
            #expect(seen.body["quote"] == nil)

            // With a dropoff: the quote is orders.estimate's for a trip from the point.
            let dropoff = GatewayIntegrationTests.dropoff
            let quoted = try await gateway.request(
                "GET",
                "/v1/drivers/nearby?\(Self.point)&radius=5000&dropoff_latitude=\(dropoff.latitude)&dropoff_longitude=\(dropoff.longitude)",
                token: rider)
            let estimate = try await gateway.request(
                "POST", "/v1/fares/estimate", token: rider,
                #"{"pickup":{"latitude":\#(Self.pickup.latitude),"longitude":\#(Self.pickup.longitude)},"dropoff":{"latitude":\#(dropoff.latitude),"longitude":\#(dropoff.longitude)}}"#
            )
            #expect(quoted.status == 200 && quoted.body["count"] == .number(2), "\(quoted.body)")
            #expect(
                quoted.body["quote"]?["total_cents"] != nil && quoted.body["quote"]?["total_cents"] == estimate.body["total_cents"],
                "\(quoted.body) \(estimate.body)")

            // Only riders; bad input is a 422 naming the parameter.
            let driver = try await gateway.request("GET", "/v1/drivers/nearby?\(Self.point)", token: apps.driver.token)
            #expect(driver.status == 403, "\(driver.body)")
            for (query, parameter) in [
                ("latitude=91&longitude=35", "latitude"), ("latitude=47.8", "longitude"), ("latitude=47.8&longitude=x", "longitude"),
                ("\(Self.point)&radius=20000", "radius"), ("\(Self.point)&dropoff_latitude=47.84", "dropoff_longitude"),
            ] {
                let refused = try await gateway.request("GET", "/v1/drivers/nearby?\(query)", token: rider)
                #expect(refused.status == 422, "\(query): \(refused.body)")
                #expect(refused.body["error"]?["message"]?.stringValue?.contains(parameter) == true, "\(query): \(refused.body)")
            }

            // The rider's live connection asks to watch the point and receives nearby_cars.
            let received = LiveClient.Log()
            let watch = #"{"watch_nearby":{"latitude":\#(Self.pickup.latitude),"longitude":\#(Self.pickup.longitude)}}"#
            let client = Task {
                try? await WebSocketClient.connect(
                    url: "ws://127.0.0.1:\(gateway.port)/v1/me/live?access_token=\(rider)", logger: Logger(label: "nearby-client")
                ) {
                    inbound, outbound, _ in
                    try await outbound.write(.text(watch))
                    for try await message in inbound.messages(maxSize: 1 << 20) {
                        guard case .text(let text) = message, let value = try? JSONCoding.decode(JSONValue.self, from: Array(text.utf8))
                        else { continue }
                        received.messages.withLock { $0.append(value) }
                    }
                }
            }
            defer { client.cancel() }
            try await eventually("a nearby_cars message with both cars", timeout: .seconds(10)) {
                received.messages.withLock { $0.contains { $0["type"] == "nearby_cars" && $0["nearby_cars"]?["count"] == .number(2) } }
            }

            // Issue 38: one socket cannot make orders work without end — watches sent in a loop
            // meet the connection's message limit (30 at once): an error (429), then close 4429.
            let flood = LiveClient.Log()
            let flooding = Task {
                let close = try? await WebSocketClient.connect(
                    url: "ws://127.0.0.1:\(gateway.port)/v1/me/live?access_token=\(rider)", logger: Logger(label: "flood-client")
                ) { inbound, outbound, _ in
                    for _ in 0..<100 { try await outbound.write(.text(watch)) }
                    for try await message in inbound.messages(maxSize: 1 << 20) {
                        guard case .text(let text) = message, let value = try? JSONCoding.decode(JSONValue.self, from: Array(text.utf8))
                        else { continue }
                        flood.messages.withLock { $0.append(value) }
                    }
                }
                flood.ending.withLock { $0 = "closed: \(String(describing: close))" }
            }
            defer { flooding.cancel() }
            try await eventually("the flooding connection is closed", timeout: .seconds(10)) { flood.ending.withLock { $0 != nil } }
            let refusal = flood.messages.withLock { $0.last }
            #expect(refusal?["status"] == 429 && refusal?["error"]?["code"] == "too_many_messages", "\(flood.messages.withLock { $0 })")
            #expect(flood.ending.withLock { $0 ?? "" }.contains("4429"), "\(flood.ending.withLock { $0 ?? "" })")
        }
    }
}
