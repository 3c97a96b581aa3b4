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

            let simulation = platform.simulate(drivers: 4, riders: 4, duration: 14, grace: 120, timeout: .seconds(200))
            // Mid-simulation, the first instances of orders and trips die; the second ones carry on.
            try await platform.waitUntilRidesAreUnderWay()
            bus.supervisor.signal(platform.orders.name, SIGKILL)
            bus.supervisor.signal(platform.trips.name, SIGKILL)
            let result = try await simulation.value
            #expect(result.status == 0, "no ride stuck: \(result.stdout)\n\(result.stderr.suffix(3000))")
            let report = SimulationReport(text: result.stdout)
            #expect(report.met("rides stuck (open at the end)"), "\(result.stdout)")
            #expect(report.met("rides in the riders' histories"), "\(result.stdout)")
            #expect(report.met("rides paid (drivers' earnings today)"), "every completed ride paid once: \(result.stdout)")

            // Once each, whichever instance did it: one trip per leg, each status of an order once, one payment per order.
            // (Calls go through the broker by service name: the surviving instances answer.)
            let orderEvents = try await Outboxes.events(platform.orders)
            let tripEvents = try await Outboxes.events(platform.trips)
            let legs = Outboxes.legs(tripEvents)
            #expect(!legs.isEmpty && Set(legs).count == legs.count, "one trip per leg: \(legs.count) trips, \(Set(legs).count) legs")
            let arrivals = tripEvents.filter { $0["type"] == "trip.destination_arrival" }.compactMap {
                $0["data"]?["data"]?["trip_id"]?.stringValue
            }
            #expect(Set(arrivals).count == arrivals.count, "one arrival per trip")
            let statuses = Outboxes.statuses(orderEvents)
            #expect(Set(statuses).count == statuses.count, "each status of an order once")
            let payments = Outboxes.payments(orderEvents)
            let completed = statuses.filter { $0.hasSuffix("/COMPLETED") }.count
            #expect(
                payments.count == completed && Set(payments).count == payments.count,
                "\(payments.count) payments for \(completed) completed rides")
        }
    }

}
