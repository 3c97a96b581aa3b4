import Bus
import Foundation
import Geo
import RideContract
import RideModels
import Testing
import Wire

/// Trips on routes through the real processes: a driver who stops on the way to the pickup makes
/// the trip late — one `trip.delayed`, the rider told, the webhook given it.
@Suite(.serialized) struct RouteIntegrationTests {
    typealias Apps = GatewayIntegrationTests.Apps

    @Test func aStoppedDriverRaisesOneDelayAlertThatReachesTheRiderAndTheWebhook() async throws {
        try await withTestBus("route-delay") { bus in
            let secret = "a-webhook-secret-of-some-length"
            let receiver = try await WebhookReceiver.start(in: bus.scratch, name: "hook", secrets: ["registered": secret], failures: 0)
            defer { receiver.stop() }
            let notifications = try await TestService.start(
                on: bus, service: BusContract.Service.notifications, executable: "ride-notifications")
            let registered = try await notifications.call(
                "register_webhook", #"{"url":"http://127.0.0.1:\#(receiver.port)/hook","secret":"\#(secret)"}"#)
            #expect(registered.status == 201, "\(registered.body)")
            // Late once the estimate slips 8 s past the first (the default is 3 minutes and 30%).
            let apps = try await Apps.start(bus, trips: ["--delay-after", "8,0"])
            let id = try await apps.bookAndAccept()
            @Sendable func delays() async throws -> [JSONValue] {
                let inbox =
                    try await apps.gateway.request("GET", "/v1/notifications", token: apps.rider.token).body["notifications"]?.arrayValue
                    ?? []
                return inbox.filter { $0["kind"] == "trip_delayed" && $0["order_id"] == .string(id) }
            }
            // Dan stands still where he accepted: every second standing is a second late.
            let here = Polyline(points: [LifecycleIntegrationTests.driverStart, LifecycleIntegrationTests.driverStart])
            for batch in 10..<50 {
                try await apps.drive(here, now: true, batch: batch)
                if try await !delays().isEmpty { break }
                try await Task.sleep(for: .seconds(1))
            }
            let told = try await delays()
            #expect(told.count == 1, "one alert for one slip: \(told)")
            #expect(told.first?["body"]?.stringValue?.hasPrefix("Your driver is running about") == true, "\(told)")
            try await eventually("the webhook has trip.delayed", timeout: .seconds(20)) {
                receiver.requests.contains { $0["status"] == 200 && $0["body"]?[0]?["data"]?["value"] == "delayed" }
            }
            let hook = receiver.requests.first { $0["body"]?[0]?["data"]?["value"] == "delayed" }?["body"]?[0]
            #expect(hook?["type"] == "trip" && hook?["data"]?["trip_metadata"]?["order_id"] == .string(id), "\(hook ?? .null)")
            #expect((hook?["data"]?["estimate"]?["delay"]?.numberValue ?? 0) >= 8, "\(hook ?? .null)")
            let order = try await apps.gateway.request("GET", "/v1/orders/\(id)", token: apps.rider.token)
            #expect(order.body["status"] == "PICKING_UP", "a late trip changes nothing else")
        }
    }

    static let railwaySquare = GeoPoint(latitude: 60.1712, longitude: 24.9436)
    static let senateSquare = GeoPoint(latitude: 60.1690, longitude: 24.9510)

    /// A HyperTrack-style trip in central Helsinki gets its route along the streets, its share page
    /// draws it on the streets, and a forced detour re-routes it.
    @Test func aTripInHelsinkiFollowsTheStreetsIsDrawnOnThemAndIsReroutedAfterADetour() async throws {
        try await withTestBus("route-helsinki") { bus in
            let tracking = try await TestTracking.start(on: bus)
            let trips = try await TestService.trips(on: bus)
            let gateway = try await TestGateway.start(on: bus)
            let start = Date()
            func fix(_ point: GeoPoint, _ second: Double) -> DeviceLocation {
                DeviceLocation(
                    latitude: point.latitude, longitude: point.longitude, recordedAt: start.addingTimeInterval(second), accuracy: 5,
                    speed: 8)
            }
            func post(_ fixes: [DeviceLocation], batch: UInt64) async throws {
                _ = try await tracking.call(
                    "ingest",
                    IngestBatch(publishableKey: TestTracking.publishableKey, deviceID: "hel-car", batchID: batch, locations: fixes),
                    as: IngestAck.self)
            }
            try await post([fix(Self.railwaySquare, 0)], batch: 1)
            let basic = ["Authorization": "Basic " + Data("ridesharing:sk_dev_ridesharing".utf8).base64EncodedString()]
            let body =
                #"{"device_id":"hel-car","destination":{"radius":30,"geometry":{"type":"Point","coordinates":[\#(Self.senateSquare.longitude),\#(Self.senateSquare.latitude)]}}}"#
            let created = try await gateway.request("POST", "/trips/", body, headers: basic)
            #expect(created.status == 201, "\(created.body)")
            let estimate = created.body["estimate"]
            #expect(estimate?["estimate_kind"] == "road", "\(created.body)")
            let line = estimate?["route"]?["polyline"]?["coordinates"]?.arrayValue ?? []
            #expect(line.count >= 3, "a route along streets, with turns: \(line.count) points")
            // Turn by turn: named streets, each entered by a manoeuvre, then the arrival.
            let steps = estimate?["route"]?["steps"]?.arrayValue ?? []
            #expect(steps.count >= 3 && steps.first?["manoeuvre"] == "depart" && steps.last?["manoeuvre"] == "arrive", "\(steps)")
            #expect(steps.dropLast().allSatisfy { $0["name"]?.stringValue?.isEmpty == false }, "each stretch's street: \(steps)")
            #expect(
                steps.dropFirst().dropLast().contains {
                    ["left", "right", "slight_left", "slight_right", "sharp_left", "sharp_right"].contains(
                        $0["manoeuvre"]?.stringValue ?? "")
                }, "\(steps)")
            let stepMetres = steps.compactMap { $0["distance"]?.numberValue }.reduce(0, +)
            #expect(
                abs(stepMetres - (estimate?["route"]?["distance"]?.numberValue ?? 0)) <= Double(steps.count),
                "the steps add up to the way left: \(stepMetres)")
            #expect(
                (estimate?["route"]?["distance"]?.numberValue ?? 0) > Self.railwaySquare.distance(to: Self.senateSquare),
                "longer than the crow flies")
            guard let tripID = created.body["trip_id"]?.stringValue, let shareID = created.body["share_id"]?.stringValue else {
                throw TestFailure("\(created)")
            }

            // The street layout, and the share page drawing the way on it.
            let streets = try await gateway.request("GET", "/v1/streets?latitude=60.17&longitude=24.945&radius=400")
            #expect(streets.status == 200 && (streets.body["coordinates"]?.arrayValue?.count ?? 0) > 20, "\(streets.status)")
            #expect(
                try await gateway.request("GET", "/v1/streets?latitude=47.8&longitude=35.1").body["coordinates"] == [],
                "outside the road data: none")
            #expect(try await gateway.request("GET", "/v1/streets?latitude=91&longitude=24.9").status == 422)
            #expect(try await gateway.request("GET", "/v1/streets?latitude=60.17").status == 422)
            let dom = try await HeadlessBrowser.dom("\(gateway.base)/\(shareID)")
            #expect(dom.components(separatedBy: #"class="street""#).count > 20, "the streets drawn: \(dom.suffix(2000))")
            #expect(HeadlessBrowser.attribute("points", of: "planned", in: dom)?.isEmpty == false, "the way to go drawn")
            #expect(dom.contains("© OpenStreetMap contributors"))

            // Three fixes 150 m off the route (a wrong turn): the trip is re-routed from there.
            guard let first = line.first?.arrayValue?.compactMap(\.numberValue), first.count == 2 else {
                throw TestFailure("no line: \(line)")
            }
            let aside = GeoPoint(latitude: first[1], longitude: first[0]).destination(bearing: 200, distance: 150)
            try await post((1...4).map { fix(aside.destination(bearing: 200, distance: Double($0) * 8), Double($0)) }, batch: 2)
            try await eventually("the trip is re-routed", timeout: .seconds(20)) {
                let page = try await trips.call("events", #"{"after":0}"#).body
                return LifecycleIntegrationTests.values(page).contains("rerouted")
            }
            let rerouted = try await trips.call("get", #"{"trip_id":"\#(tripID)"}"#).body
            let from = rerouted["estimate"]?["route"]?["polyline"]?["coordinates"]?[0]?.arrayValue?.compactMap(\.numberValue) ?? []
            #expect(
                from.count == 2 && GeoPoint(latitude: from[1], longitude: from[0]).distance(to: aside) < 300,
                "the new way starts where the car is: \(from)")
        }
    }
}
