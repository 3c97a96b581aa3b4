import Bus
import Foundation
import Geo
import RideContract
import Testing
import Wire

/// Trips on routes through the real processes: a driver who stops on the way to the pickup makes
/// the trip late — one `trip.delayed`, the rider told, the webhook given it.
@Suite(.serialized) struct RouteIntegrationTests {
    typealias Apps = GatewayIntegrationTests.Apps
    typealias Receiver = NotificationsIntegrationTests.Receiver

    @Test func aStoppedDriverRaisesOneDelayAlertThatReachesTheRiderAndTheWebhook() async throws {
        try await withTestBus("route-delay") { bus in
            let secret = "a-webhook-secret-of-some-length"
            let receiver = try Receiver.start(in: bus.scratch, name: "hook", secret: secret, failures: 0)
            defer { receiver.stop() }
            let notifications = try await TestService.start(on: bus, service: BusContract.Service.notifications, executable: "ride-notifications")
            let registered = try await notifications.call("register_webhook", #"{"url":"http://127.0.0.1:\#(receiver.port)/hook","secret":"\#(secret)"}"#)
            #expect(registered.status == 201, "\(registered.body)")
            // Late once the estimate slips 8 s past the first (the default is 3 minutes and 30%).
            let apps = try await Apps.start(bus, trips: ["--delay-after", "8,0"])
            let id = try await apps.bookAndAccept()
            @Sendable func delays() async throws -> [JSONValue] {
                let inbox = try await apps.gateway.request("GET", "/v1/notifications", token: apps.rider.token).body["notifications"]?.arrayValue ?? []
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
}
