import Bus
import Foundation
import ServiceKit
import Testing

/// Several instances of the stateful services on one set of SQLite files: the broker spreads
/// requests over their workers, every instance reacts to every event, and idempotent reactions
/// make each happen once in effect. Losing an instance (SIGKILL, not restarted) loses no ride.
@Suite(.serialized) struct ScaleOutIntegrationTests {
    @Test func twoInstancesOfEachServiceCompleteRidesOnceEvenAfterLosingOne() async throws {
        try await withTestBus("scale-out") { bus in
            let platform = try await OrdersIntegrationTests.Platform.start(bus)
            let notifications = try await TestService.start(on: bus, service: "notifications", executable: "ride-notifications")
            for service in [platform.users, platform.trips, platform.orders, notifications] { _ = try await service.replica(2) }

            // Riders and drivers in another city (Kyiv), so the platform's own drivers are never offered these rides.
            let simulation = Task {
                try await runCommand(Binaries.ridectl, [
                    "simulate", "--drivers", "4", "--riders", "4", "--duration", "14", "--grace", "120", "--speedup", "6", "--box-km", "1",
                    "--center", "50.4501,30.5234", "--ingest", platform.tracking.ingest, "--publishable-key", TestTracking.publishableKey, "--share-links", "",
                ] + bus.ridectlFlags, timeout: .seconds(200))
            }
            // Mid-simulation, the first instances of orders and trips die; the second ones carry on.
            try await eventually("rides are under way", timeout: .seconds(30)) {
                let page = try await platform.orders.call("events", #"{"after":0,"limit":1000}"#).body
                return (page["events"]?.arrayValue ?? []).contains { $0["type"] == "order.status" && $0["data"]?["order"]?["status"] == "PICKING_UP" }
            }
            bus.supervisor.signal(platform.orders.name, SIGKILL)
            bus.supervisor.signal(platform.trips.name, SIGKILL)
            let result = try await simulation.value
            #expect(result.status == 0, "no ride stuck: \(result.stdout)\n\(result.stderr.suffix(3000))")
            func row(_ label: String) -> Substring? { result.stdout.split(separator: "\n").first { $0.hasPrefix(label) } }
            #expect(row("rides stuck (open at the end)")?.contains("✔") == true, "\(result.stdout)")
            #expect(row("rides in the riders' histories")?.contains("✔") == true, "\(result.stdout)")
            #expect(row("rides paid (drivers' earnings today)")?.contains("✔") == true, "every completed ride paid once: \(result.stdout)")

            // Once each, whichever instance did it: one trip per leg, each status of an order once, one payment per order.
            // (Calls go through the broker by service name: the surviving instances answer.)
            let orderEvents = try await Self.events(platform.orders)
            let tripEvents = try await Self.events(platform.trips)
            let legs = tripEvents.filter { $0["type"] == "trip.created" }.compactMap { event -> String? in
                guard let metadata = event["data"]?["data"]?["trip_metadata"], let order = metadata["order_id"]?.stringValue,
                      let leg = metadata["leg"]?.stringValue else { return nil }
                return "\(order)/\(leg)"
            }
            #expect(!legs.isEmpty && Set(legs).count == legs.count, "one trip per leg: \(legs.count) trips, \(Set(legs).count) legs")
            let arrivals = tripEvents.filter { $0["type"] == "trip.destination_arrival" }.compactMap { $0["data"]?["data"]?["trip_id"]?.stringValue }
            #expect(Set(arrivals).count == arrivals.count, "one arrival per trip")
            let statuses = orderEvents.filter { $0["type"] == "order.status" }.compactMap { event -> String? in
                guard let order = event["data"]?["order"]?["id"]?.stringValue, let status = event["data"]?["order"]?["status"]?.stringValue else { return nil }
                return "\(order)/\(status)"
            }
            #expect(Set(statuses).count == statuses.count, "each status of an order once")
            let payments = orderEvents.filter { $0["type"] == "order.paid" }.compactMap { $0["data"]?["payment"]?["order_id"]?.stringValue }
            let completed = statuses.filter { $0.hasSuffix("/COMPLETED") }.count
            #expect(payments.count == completed && Set(payments).count == payments.count, "\(payments.count) payments for \(completed) completed rides")
        }
    }

    /// Every event of a service's outbox, through its `events` op.
    static func events(_ service: TestService) async throws -> [JSONValue] {
        var events: [JSONValue] = []
        var after = 0.0
        while true {
            let page = try await service.call("events", #"{"after":\#(Int(after)),"limit":1000}"#).body
            let batch = page["events"]?.arrayValue ?? []
            events += batch
            guard let last = batch.last?["sequence"]?.numberValue ?? batch.last?["sequence"]?.stringValue.flatMap(Double.init), last > after else { return events }
            after = last
        }
    }
}
