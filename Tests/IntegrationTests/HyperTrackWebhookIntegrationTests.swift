import Crypto
import Foundation
import Geo
import PlatformLauncher
import Testing
import Wire

/// HyperTrack as the tracking source, as an operator whose driver app runs HyperTrack's SDK has it:
/// HyperTrack's signed webhook deliveries (payload shapes from its docs) carry the driver's
/// locations, which take the ride to the pickup by the trip's own geofence, and a
/// `destination_arrival`, which ends the ride's drive at the drop-off as the sample's Cloud
/// Function does — through the real gateway, tracking, trips and orders. Unsigned, forged,
/// malformed, stale and replayed deliveries change nothing.
@Suite(.serialized) struct HyperTrackWebhookIntegrationTests {
    static let secret = "hypertrack-webhook-secret-of-the-account"
    static let path = "/v1/providers/hypertrack/webhook"

    static func signature(_ body: String, secret: String = secret) -> String {
        HMAC<SHA256>.authenticationCode(for: Array(body.utf8), using: SymmetricKey(data: Array(secret.utf8))).map {
            String(format: "%02x", $0)
        }.joined()
    }

    /// HyperTrack's location event (its webhook docs' shape) of `device` at `point`.
    static func location(_ device: String, _ point: GeoPoint, at time: Date, created: Date = Date()) -> JSONValue {
        [
            "type": "location", "device_id": .string(device), "recorded_at": .string(RFC3339.format(time)),
            "created_at": .string(RFC3339.format(created)),
            "version": "2.0.0",
            "data": [
                "geometry": ["type": "Point", "coordinates": [.number(point.longitude), .number(point.latitude)]], "speed": 10,
                "accuracy": 5, "bearing": 0,
            ],
        ]
    }

    /// A body of events, as text (what is signed is the exact bytes sent).
    static func body(_ events: [JSONValue]) throws -> String {
        String(decoding: try JSONCoding.encode(JSONValue.array(events)), as: UTF8.self)
    }

    @Test(.timeLimit(.minutes(4)))
    func hyperTrackLocationsAndArrivalsDriveARideAndForgeriesChangeNothing() async throws {
        try await withTestBus("hypertrack-webhook") { bus in
            let apps = try await GatewayIntegrationTests.Apps.start(bus, gateway: ["--hypertrack-webhook-secret", Self.secret])
            let gateway = apps.gateway
            let id = try await apps.bookAndAccept()
            func status() async throws -> JSONValue? {
                try await gateway.request("GET", "/v1/orders/\(id)", token: apps.rider.token).body["status"]
            }
            func fixes(_ path: Polyline) -> [JSONValue] {
                let distances = Array(stride(from: 0.0, through: path.length, by: 10))
                return zip(distances, apps.clock.stamps(distances.count, notBefore: Date())).map { distance, time in
                    Self.location(apps.deviceID, path.point(atDistance: min(distance, path.length)), at: time)
                }
            }
            // Dan drives to the pickup: HyperTrack has his fixes (one delivery, newest first: sorted by recorded_at here).
            let toPickup = try Self.body(
                fixes(Polyline(points: [LifecycleIntegrationTests.driverStart, GatewayIntegrationTests.pickup])).reversed())

            // Refused whole, nothing done: no signature, a forged one, a body the signature is not of.
            let unsigned = try await gateway.request("POST", Self.path, toPickup)
            #expect(unsigned.status == 401 && unsigned.body["error"]?["code"] == "missing_signature", "\(unsigned.body)")
            let forged = try await gateway.request(
                "POST", Self.path, toPickup, headers: ["x-hypertrack-signature": Self.signature(toPickup, secret: "guessed-secret")])
            #expect(forged.status == 401 && forged.body["error"]?["code"] == "bad_signature", "\(forged.body)")
            let tampered = toPickup.replacingOccurrences(of: "gw-dan-phone", with: "gw-eve-phone")
            #expect(
                try await gateway.request("POST", Self.path, tampered, headers: ["x-hypertrack-signature": Self.signature(toPickup)]).status
                    == 401)
            // Signed, but not events; an event without its coordinates; a delivery from an hour ago.
            for (body, status, why) in [
                (#"{"type":"location"}"#, 400, "the body is not a JSON array of events"),
                (
                    try Self.body([
                        ["type": "location", "device_id": "gw-dan-phone", "created_at": .string(RFC3339.format(Date())), "data": [:]]
                    ]), 400,
                    "events[0].data.geometry.coordinates"
                ),
                (
                    try Self.body([
                        Self.location(apps.deviceID, GatewayIntegrationTests.pickup, at: Date(), created: Date().addingTimeInterval(-3600))
                    ]), 409,
                    "a replayed delivery"
                ),
            ] {
                let reply = try await gateway.request("POST", Self.path, body, headers: ["x-hypertrack-signature": Self.signature(body)])
                #expect(reply.status == status && reply.body["error"]?["message"]?.stringValue?.contains(why) == true, "\(why): \(reply)")
            }
            try await Task.sleep(for: .seconds(1))
            #expect(try await status() == "PICKING_UP", "nothing changed")

            // The signed delivery: every fix taken; trips sees Dan reach the pickup.
            let taken = try await gateway.request(
                "POST", Self.path, toPickup, headers: ["x-hypertrack-signature": Self.signature(toPickup)])
            let count = toPickup.components(separatedBy: #""type":"location""#).count - 1
            #expect(
                taken.status == 200 && taken.body["taken"]?.numberValue == Double(count) && taken.body["ignored"] == [], "\(taken.body)")
            try await apps.status(of: id, is: "REACHED_PICKUP")
            // The same delivery again: a replay, refused.
            let replayed = try await gateway.request(
                "POST", Self.path, toPickup, headers: ["x-hypertrack-signature": Self.signature(toPickup)])
            #expect(replayed.status == 409 && replayed.body["error"]?["code"] == "replayed", "\(replayed.body)")

            // The ride: HyperTrack's fixes stop 100 m short of the drop-off (outside the geofence), then
            // its trip says destination_arrival for this order — with a device status and an unknown event beside.
            #expect(try await gateway.request("POST", "/v1/orders/\(id)/start", token: apps.driver.token).status == 200)
            try await apps.status(of: id, is: "DROPPING_OFF")
            let ride = LifecycleIntegrationTests.ride
            let short = Polyline(points: [ride.points[0], ride.points[1], ride.points[1].destination(bearing: 0, distance: 400)])
            let drive = try Self.body(fixes(short))
            #expect(
                try await gateway.request("POST", Self.path, drive, headers: ["x-hypertrack-signature": Self.signature(drive)]).status
                    == 200)
            try await Task.sleep(for: .seconds(2))
            #expect(try await status() == "DROPPING_OFF", "100 m short: no geofence arrival")
            let now = JSONValue.string(RFC3339.format(Date()))
            func arrival(_ device: String, order: String) -> JSONValue {
                [
                    "type": "trip", "created_at": now, "device_id": .string(device), "version": "2.0.0",
                    "data": [
                        "value": "destination_arrival", "trip_id": "4ee5713c-0000",
                        "trip_metadata": ["order_id": .string(order), "leg": "dropoff"],
                    ],
                ]
            }
            let events: [JSONValue] = [
                ["type": "device_status", "created_at": now, "device_id": .string(apps.deviceID), "data": ["value": "active"]],
                arrival("gw-stranger-phone", order: id),
                arrival(apps.deviceID, order: id),
                [
                    "type": "battery", "created_at": now, "device_id": .string(apps.deviceID),
                    "data": ["value": "low", "battery_percent": 15],
                ],
            ]
            let arrivals = try Self.body(events)
            let answer = try await gateway.request(
                "POST", Self.path, arrivals, headers: ["x-hypertrack-signature": Self.signature(arrivals)])
            #expect(answer.status == 200 && answer.body["received"] == 4 && answer.body["taken"] == 1, "\(answer.body)")
            let ignored = answer.body["ignored"]?.arrayValue ?? []
            #expect(ignored.compactMap { $0["index"]?.numberValue } == [0, 1, 3], "\(ignored)")
            #expect(
                ignored.first { $0["index"] == 1 }?["reason"]?.stringValue?.contains("has no driver here") == true,
                "a device that is not the driver's: \(ignored)")
            let arrived = try await gateway.request("GET", "/v1/orders/\(id)", token: apps.driver.token).body
            #expect(arrived["status"] == "REACHED_DROPOFF" && arrived["arrivals_reported"] == ["dropoff"], "\(arrived)")
            #expect(try await gateway.request("POST", "/v1/orders/\(id)/end", token: apps.driver.token).body["status"] == "COMPLETED")
        }
    }

    /// Without a secret the endpoint is off, and says how to turn it on.
    @Test func withoutASecretTheEndpointIsOff() async throws {
        try await withTestBus("hypertrack-webhook-off") { bus in
            let gateway = try await TestGateway.start(on: bus)
            let reply = try await gateway.request("POST", Self.path, "[]", headers: ["x-hypertrack-signature": Self.signature("[]")])
            #expect(
                reply.status == 404 && reply.body["error"]?["message"]?.stringValue?.contains("--hypertrack-webhook-secret") == true,
                "\(reply)")
        }
    }
}
