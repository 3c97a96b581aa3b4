import Bus
import Foundation
import PlatformLauncher
import ServiceKit
import TestPostgres
import Testing
import Wire

/// `ride-notifications` with the real services, gateway and bus: inboxes after a whole ride,
/// device commands, and webhooks delivered to local receivers (signatures, retries, dead letters, replay).
@Suite(.serialized) struct NotificationsIntegrationTests {
    /// On SQLite one instance; on PostgreSQL two on one database, which must between them notify,
    /// command and deliver each thing once, as one would.
    @Test(arguments: ["sqlite", "postgres"])
    func aRideNotifiesBothPartiesCommandsThePhoneAndReachesWebhooks(database: String) async throws {
        let databaseArguments = database == "postgres" ? ["--database-url", try await TestPostgresServer.newDatabase().urlString] : []
        try await withTestBus("notifications") { bus in
            let secret = "a-webhook-secret-of-some-length"
            let good = try await WebhookReceiver.start(in: bus.scratch, name: "good", secrets: ["registered": secret], failures: 2)
            let bad = try await WebhookReceiver.start(in: bus.scratch, name: "bad", secrets: ["registered": secret], failures: nil)
            defer {
                good.stop()
                bad.stop()
            }
            // First, so its webhooks are there before any event (it catches up on the sources once they answer).
            let notifications = try await TestService.start(
                on: bus, service: "notifications", executable: "ride-notifications",
                arguments: ["--webhook-retries", "0.3,0.3", "--webhook-timeout-s", "2"] + databaseArguments)
            if !databaseArguments.isEmpty { _ = try await notifications.replica(2) }
            for receiver in [good, bad] {
                let registered = try await notifications.call(
                    "register_webhook", #"{"url":"http://127.0.0.1:\#(receiver.port)/hook","secret":"\#(secret)"}"#)
                #expect(registered.status == 201, "\(registered.body)")
            }
            let apps = try await GatewayIntegrationTests.Apps.start(bus)
            // The good receiver fails its first two requests, then recovers; the bad one stays down.
            let riderLive = LiveClient(url: "ws://127.0.0.1:\(apps.gateway.port)/v1/me/live?access_token=\(apps.rider.token)")
            try await Task.sleep(for: .milliseconds(300))  // connected and subscribed before the first notification
            let id = try await apps.ride()

            // Inboxes, through the gateway.
            try await eventually("the rider's inbox has the completed ride and its receipt") {
                let inbox =
                    try await apps.gateway.request("GET", "/v1/notifications", token: apps.rider.token).body["notifications"]?.arrayValue
                    ?? []
                return inbox.contains { $0["kind"] == "ride_completed" } && inbox.contains { $0["kind"] == "receipt" }
            }
            let riderInbox = try await apps.gateway.request("GET", "/v1/notifications", token: apps.rider.token).body["notifications"]
            let kinds = (riderInbox?.arrayValue ?? []).compactMap { $0["kind"]?.stringValue }
            for kind in ["driver_assigned", "driver_arriving", "driver_arrived", "ride_started", "ride_completed", "receipt"] {
                #expect(kinds.filter { $0 == kind }.count == 1, "\(kind) once in \(kinds)")
            }
            try await eventually("the rider's WebSocket got the completed ride") {
                riderLive.received.contains { $0["type"] == "notification" && $0["notification"]?["kind"] == "ride_completed" }
            }
            let pushed = riderLive.received.compactMap { $0["notification"]?["kind"]?.stringValue }
            #expect(
                pushed.filter { ["driver_assigned", "driver_arrived", "ride_started", "ride_completed"].contains($0) }
                    == ["driver_assigned", "driver_arrived", "ride_started", "ride_completed"], "pushed live, in order: \(pushed)")
            let driverInbox = try await apps.gateway.request("GET", "/v1/notifications", token: apps.driver.token).body["notifications"]
            #expect((driverInbox?.arrayValue ?? []).contains { $0["kind"] == "new_offer" && $0["order_id"] == .string(id) })

            // The phone was told to start and stop tracking.
            let page = try await notifications.call("events", #"{"after":0}"#).body
            let commands = (page["events"]?.arrayValue ?? []).filter { $0["type"] == "device.command" }.compactMap {
                $0["data"]?["command"]?.stringValue
            }
            #expect(commands == ["start_tracking", "stop_tracking"])

            // Every order status reached the good receiver, signed; the failed attempts were retried (with the same webhook-id).
            try await eventually("the good receiver has every status, the failed ones retried", timeout: .seconds(20)) {
                let requests = good.requests
                let failed = requests.filter { $0["status"] == 500 }.compactMap { $0["delivery"] }
                return requests.contains { $0["status"] == 200 && $0["body"]?[0]?["data"]?["value"] == "COMPLETED" }
                    && failed.allSatisfy { id in requests.contains { $0["delivery"] == id && $0["status"] == 200 } }
            }
            let delivered = good.requests.filter { $0["status"] == 200 }
            #expect(delivered.allSatisfy { $0["signature_valid"] == .bool(true) }, "every signature verifies")
            #expect(good.requests.allSatisfy { $0["signature_valid"] == .bool(true) })
            let statuses = delivered.compactMap { request -> String? in
                guard request["body"]?[0]?["type"] == "order" else { return nil }
                return request["body"]?[0]?["data"]?["value"]?.stringValue
            }
            #expect(Set(statuses) == Set(GatewayIntegrationTests.allStatuses), "\(statuses)")
            #expect(delivered.contains { $0["body"]?[0]?["type"] == "trip" && $0["body"]?[0]?["data"]?["value"] == "destination_arrival" })
            let failedFirst = good.requests.filter { $0["status"] == 500 }.compactMap { $0["delivery"]?.stringValue }
            #expect(!failedFirst.isEmpty, "the first attempts failed")
            #expect(
                failedFirst.allSatisfy { id in delivered.contains { $0["delivery"] == .string(id) } }, "and were retried until delivered")

            // The bad receiver: three attempts each, then dead letters; replayed once it is back, delivered.
            try await eventually("dead letters", timeout: .seconds(20)) {
                (try await notifications.call("dead_letters", #"{"limit":500}"#).body["deliveries"]?.arrayValue?.count ?? 0) >= 8
            }
            let dead = try await notifications.call("dead_letters", "{}").body["deliveries"]?.arrayValue ?? []
            #expect(dead.allSatisfy { $0["attempts"] == 3 && $0["url"]?.stringValue?.contains("\(bad.port)") == true }, "\(dead.prefix(2))")
            guard let replayed = dead.first?["id"]?.numberValue, let webhookID = dead.first?["webhook_id"]?.stringValue else {
                throw TestFailure("no dead letter")
            }
            try FileManager.default.removeItem(atPath: bad.failing)
            #expect(try await notifications.call("replay", #"{"delivery_id":\#(Int(replayed))}"#).status == 200)
            try await eventually("the replayed delivery arrived, under the webhook-id of its first attempts") {
                bad.requests.contains { $0["delivery"] == .string("msg_\(webhookID)_\(Int(replayed))") && $0["status"] == 200 }
            }
            #expect(try await notifications.call("replay", #"{"delivery_id":\#(Int(replayed))}"#).status == 409, "no longer dead")
            riderLive.close()
        }
    }
}
