import Bus
import Foundation
import Geo
import RideModels
import ServiceKit
import Testing
import Wire

/// The nine steps of the seed, end to end across real processes: users, tracking, trips, orders
/// and its reactor, through the bus.
@Suite(.serialized) struct LifecycleIntegrationTests {
    typealias Platform = OrdersIntegrationTests.Platform

    static let pickup = GeoPoint(latitude: 47.8359, longitude: 35.1146)
    /// Dan's phone starts 400 m south of the pickup.
    static let driverStart = pickup.destination(bearing: 180, distance: 400)
    /// To the dropoff: 600 m east, then 500 m north (a corner, as streets have).
    static let ride = Polyline(points: [
        pickup, pickup.destination(bearing: 90, distance: 600),
        pickup.destination(bearing: 90, distance: 600).destination(bearing: 0, distance: 500),
    ])
    static var dropoff: GeoPoint { ride.points.last! }
    static let booking =
        #""pickup":{"latitude":\#(pickup.latitude),"longitude":\#(pickup.longitude)},"dropoff":{"latitude":\#(dropoff.latitude),"longitude":\#(dropoff.longitude)}"#

    /// Dan's phone drives `path` at 10 m/s, one fix a second, stamped by the platform's clock
    /// (`now`: not before this moment, so the fixes belong to a trip that has just started;
    /// otherwise they may lie in the past, before any trip that follows).
    static func drive(_ platform: Platform, _ path: Polyline, now: Bool = false, batch: UInt64) async throws {
        let distances = Array(stride(from: 0.0, through: path.length, by: 10))
        let times = platform.clock.stamps(distances.count, notBefore: now ? Date() : nil)
        let fixes = zip(distances, times).map { distance, time in
            let point = path.point(atDistance: distance)
            return DeviceLocation(latitude: point.latitude, longitude: point.longitude, recordedAt: time, accuracy: 5, speed: 10)
        }
        for (index, chunk) in stride(from: 0, to: fixes.count, by: 50).map({ Array(fixes[$0..<min($0 + 50, fixes.count)]) }).enumerated() {
            let batch = IngestBatch(
                publishableKey: TestTracking.publishableKey, deviceID: "dan-phone", batchID: batch * 1000 + UInt64(index), locations: chunk)
            _ = try await platform.tracking.call("ingest", batch, as: IngestAck.self)
        }
    }

    static func status(_ platform: Platform, _ id: String, is expected: String) async throws {
        try await eventually("the order is \(expected)", timeout: .seconds(20)) {
            try await platform.call("get", as: platform.ann, #""id":"\#(id)""#).body["status"] == .string(expected)
        }
    }

    /// Books, has Dan accept, drives him to the pickup (his fixes stamped in the past, so they are
    /// not part of the ride's summary) and returns the order id once it is REACHED_PICKUP.
    static func toPickup(_ platform: Platform) async throws -> String {
        let created = try await platform.call("create", as: platform.ann, booking)
        guard case .string(let id)? = created.body["id"] else { throw TestFailure("create: \(created)") }
        #expect(try await platform.call("accept", as: platform.dan, #""id":"\#(id)""#).status == 200)
        try await status(platform, id, is: "PICKING_UP")
        try await drive(platform, Polyline(points: [driverStart, pickup]), batch: 1)
        try await status(platform, id, is: "REACHED_PICKUP")
        return id
    }

    @Test func allNineStepsWithSummaryAndFare() async throws {
        try await withTestBus("lifecycle") { bus in
            var statuses: EventSubscriber<OrderStatusChanged>?
            let platform = try await Platform.start(bus) {
                statuses = try await EventSubscriber<OrderStatusChanged>(
                    endpoint: bus.egress, prefixes: ["order.status."], logger: testLogger)
            }
            let id = try await Self.toPickup(platform)
            let order = #""id":"\#(id)""#
            #expect(try await platform.call("start_ride", as: platform.dan, order).body["status"] == "STARTED_RIDE")
            try await Self.status(platform, id, is: "DROPPING_OFF")
            try await Self.drive(platform, Self.ride, now: true, batch: 2)
            try await Self.status(platform, id, is: "REACHED_DROPOFF")
            let completed = try await platform.call("end_ride", as: platform.dan, order)
            #expect(completed.body["status"] == "COMPLETED", "\(completed.body)")

            let distance = completed.body["summary"]?["distance"]?.numberValue ?? 0
            #expect(abs(distance - Self.ride.length) / Self.ride.length < 0.05, "summary \(distance) m for a \(Self.ride.length) m ride")
            let duration = completed.body["summary"]?["duration"]?.numberValue ?? -1
            let expectedFare = FareFormula.cents(metres: distance, seconds: duration)
            #expect(completed.body["fare"]?["total_cents"]?.numberValue == Double(expectedFare), "\(completed.body["fare"] ?? .null)")
            #expect(completed.body["fare"]?["currency"] == "USD")

            let events = try await collect(statuses!, count: 8)
            #expect(
                events.map(\.topic)
                    == ["NEW", "ACCEPTED", "PICKING_UP", "REACHED_PICKUP", "STARTED_RIDE", "DROPPING_OFF", "REACHED_DROPOFF", "COMPLETED"]
                    .map { "order.status.\($0)" })
            #expect(events.map(\.event.sequence) == Array(1...8))
            #expect(events.last?.event.data.order.summary != nil, "the COMPLETED event carries the summary")
            await statuses!.close()

            let trips = try await platform.trips.call("events", #"{"after":0}"#)
            let values = Self.values(trips.body)
            #expect(values.filter { $0 == "created" }.count == 2, "a pickup and a dropoff trip: \(values)")
            #expect(values.filter { $0 == "completed" }.count == 2, "both completed: \(values)")
        }
    }

    @Test func aDriverWhoAcceptsAtThePickupHasReachedItAtOnce() async throws {
        try await withTestBus("lifecycle-at-pickup") { bus in
            let platform = try await Platform.start(bus)
            try await Self.drive(platform, Polyline(points: [Self.driverStart, Self.pickup]), now: true, batch: 1)
            let created = try await platform.call("create", as: platform.ann, Self.booking)
            guard case .string(let id)? = created.body["id"] else { throw TestFailure("create: \(created)") }
            #expect(try await platform.call("accept", as: platform.dan, #""id":"\#(id)""#).status == 200)
            // The pickup trip starts inside its destination: it arrives as it is made, before the
            // order has taken it; the arrival still moves the order on.
            try await Self.status(platform, id, is: "REACHED_PICKUP")
        }
    }

    /// An order taken to `status` (one where it waits for a person or a device).
    static func order(at status: String, _ platform: Platform) async throws -> String {
        if status == "PICKING_UP" {
            let created = try await platform.call("create", as: platform.ann, booking)
            guard case .string(let id)? = created.body["id"] else { throw TestFailure("create: \(created)") }
            _ = try await platform.call("accept", as: platform.dan, #""id":"\#(id)""#)
            try await Self.status(platform, id, is: "PICKING_UP")
            return id
        }
        let id = try await toPickup(platform)
        if status == "REACHED_PICKUP" { return id }
        _ = try await platform.call("start_ride", as: platform.dan, #""id":"\#(id)""#)
        try await Self.status(platform, id, is: "DROPPING_OFF")
        if status == "DROPPING_OFF" { return id }
        try await drive(platform, Polyline(points: [pickup, dropoff]), now: true, batch: 3)
        try await Self.status(platform, id, is: "REACHED_DROPOFF")
        return id
    }

    @Test func cancellingAtEachOpenStatusEndsItsTrip() async throws {
        try await withTestBus("lifecycle-cancel") { bus in
            let platform = try await Platform.start(bus)
            // ACCEPTED and STARTED_RIDE last only until the reactor's trip call returns; the
            // statuses where an order waits are these (and NEW, below).
            // The rider's cancel ends the order at any open status; the driver's only once the ride
            // started (before, it goes back to dispatch: OrdersIntegrationTests).
            for (canceller, status) in [
                (platform.ann, "PICKING_UP"), (platform.ann, "REACHED_PICKUP"), (platform.dan, "DROPPING_OFF"),
                (platform.ann, "REACHED_DROPOFF"),
            ] {
                let id = try await Self.order(at: status, platform)
                let cancelled = try await platform.call("cancel", as: canceller, #""id":"\#(id)""#)
                #expect(cancelled.body["status"] == "CANCELLED", "at \(status)")
                try await eventually("the reactor let go of the trip") {
                    try await platform.call("get", as: platform.ann, #""id":"\#(id)""#).body["trip_id"] == nil
                }
                // The order keeps who drove it and who cancelled, when; both still read it, its
                // chat, and find it in their history.
                let order = try await platform.call("get", as: platform.dan, #""id":"\#(id)""#).body
                #expect(order["driver"]?["id"] == .string(platform.driverIDs[0]), "at \(status): \(order)")
                #expect(
                    order["cancelled_by"]?["id"] == .string(canceller.1) && order["cancelled_at"]?.stringValue != nil,
                    "at \(status): \(order)")
                for party in [platform.ann, platform.dan] {
                    #expect(
                        try await platform.call("messages", as: party, #""id":"\#(id)""#).status == 200, "the chat, read-only, at \(status)"
                    )
                    let history = try await platform.call("history", as: party).body["rides"]?.arrayValue ?? []
                    #expect(history.contains { $0["order"]?["id"] == .string(id) }, "in \(party.0)'s history at \(status): \(history)")
                }
                // Back where the next ride starts.
                try await Self.drive(platform, Polyline(points: [Self.dropoff, Self.driverStart]), batch: 4)
            }
            let values = Self.values(try await platform.trips.call("events", #"{"after":0}"#).body)
            #expect(values.filter { $0 == "created" }.count == 6, "\(values)")
            #expect(values.filter { $0 == "completed" }.count == 6, "every trip ended: \(values)")
            // NEW: cancelled before any trip.
            let created = try await platform.call("create", as: platform.ann, Self.booking)
            guard case .string(let id)? = created.body["id"] else { throw TestFailure("create: \(created)") }
            #expect(try await platform.call("cancel", as: platform.ann, #""id":"\#(id)""#).body["status"] == "CANCELLED")
        }
    }

    @Test func cancellingWhileTheReactorWaitsForTripsLeavesNoTripBehind() async throws {
        // ACCEPTED and STARTED_RIDE last only while the reactor's trip call is under way; with
        // ride-trips down they last until it is back, and a cancel can land in between.
        try await withTestBus("lifecycle-cancel-waiting") { bus in
            let platform = try await Platform.start(bus)
            let started = try await Self.order(at: "REACHED_PICKUP", platform)
            bus.supervisor.signal(platform.trips.name, SIGKILL)
            _ = await bus.supervisor.waitForExit(platform.trips.name, timeout: .seconds(5))

            #expect(try await platform.call("start_ride", as: platform.dan, #""id":"\#(started)""#).body["status"] == "STARTED_RIDE")
            #expect(
                try await platform.call("cancel", as: platform.dan, #""id":"\#(started)""#).body["status"] == "CANCELLED", "at STARTED_RIDE"
            )

            let created = try await platform.call("create", as: platform.ann, Self.booking)
            guard case .string(let accepted)? = created.body["id"] else { throw TestFailure("create: \(created)") }
            #expect(try await platform.call("accept", as: platform.dan, #""id":"\#(accepted)""#).status == 200)
            #expect(try await platform.call("get", as: platform.ann, #""id":"\#(accepted)""#).body["status"] == "ACCEPTED")
            #expect(
                try await platform.call("cancel", as: platform.ann, #""id":"\#(accepted)""#).body["status"] == "CANCELLED", "at ACCEPTED")

            try await platform.trips.startProcess()
            // Once trips is back, every trip that was made ends, and both orders let go of their trips.
            try await eventually("every trip is completed", timeout: .seconds(30)) {
                let values = Self.values(try await platform.trips.call("events", #"{"after":0}"#).body)
                return values.filter { $0 == "created" }.count == values.filter { $0 == "completed" }.count
            }
            for id in [started, accepted] {
                try await eventually("order \(id) let go of its trip") {
                    try await platform.call("get", as: platform.ann, #""id":"\#(id)""#).body["trip_id"] == nil
                }
            }
        }
    }

    @Test func killingOrdersInTheMiddleOfARideLosesNothing() async throws {
        try await withTestBus("lifecycle-kill") { bus in
            let platform = try await Platform.start(bus)
            let id = try await Self.toPickup(platform)
            let order = #""id":"\#(id)""#
            #expect(try await platform.call("start_ride", as: platform.dan, order).status == 200)
            // Killed right after STARTED_RIDE was committed: its reaction may or may not have run.
            bus.supervisor.signal(platform.orders.name, SIGKILL)
            _ = await bus.supervisor.waitForExit(platform.orders.name, timeout: .seconds(5))
            try await platform.orders.startProcess()
            try await Self.status(platform, id, is: "DROPPING_OFF")
            // And trips, while the car drives to the dropoff.
            bus.supervisor.signal(platform.trips.name, SIGKILL)
            _ = await bus.supervisor.waitForExit(platform.trips.name, timeout: .seconds(5))
            try await Self.drive(platform, Self.ride, now: true, batch: 2)
            try await platform.trips.startProcess()
            try await Self.status(platform, id, is: "REACHED_DROPOFF")
            #expect(try await platform.call("end_ride", as: platform.dan, order).body["status"] == "COMPLETED")

            let page = try await platform.orders.call("events", #"{"after":0}"#)
            let statuses = Self.values(page.body, path: ["data", "order", "status"])
            #expect(
                statuses == [
                    "NEW", "ACCEPTED", "PICKING_UP", "REACHED_PICKUP", "STARTED_RIDE", "DROPPING_OFF", "REACHED_DROPOFF", "COMPLETED",
                ], "\(statuses)")
            let values = Self.values(try await platform.trips.call("events", #"{"after":0}"#).body)
            #expect(values.filter { $0 == "created" }.count == 2, "no duplicate trips: \(values)")
        }
    }

    @Test func aDriverAlreadyAtThePickupArrivesAtOnce() async throws {
        // Found by the simulator: the trip noticed the arrival when it was created and said nothing.
        try await withTestBus("lifecycle-there") { bus in
            let platform = try await Platform.start(bus)
            try await Self.drive(platform, Polyline(points: [Self.pickup, Self.pickup]), batch: 1)
            let created = try await platform.call("create", as: platform.ann, Self.booking)
            guard case .string(let id)? = created.body["id"] else { throw TestFailure("create: \(created)") }
            #expect(try await platform.call("accept", as: platform.dan, #""id":"\#(id)""#).status == 200)
            try await Self.status(platform, id, is: "REACHED_PICKUP")
            let statuses = Self.values(try await platform.orders.call("events", #"{"after":0}"#).body, path: ["data", "order", "status"])
            #expect(statuses == ["NEW", "ACCEPTED", "PICKING_UP", "REACHED_PICKUP"])
        }
    }

    /// A field of every event of an `events` page (by default the trip event's `data.value`).
    static func values(_ page: JSONValue, path: [String] = ["data", "data", "value"]) -> [String] {
        guard case .array(let events)? = page["events"] else { return [] }
        return events.compactMap { event in path.reduce(Optional(event)) { $0?[$1] }?.stringValue }
    }
}

/// The default fare schedule of `ride-orders` (USD, 250 + 120/km + 30/min, at least 500 cents).
enum FareFormula {
    static func cents(metres: Double, seconds: Double) -> Int {
        max(500, Int((250 + metres / 1000 * 120 + seconds / 60 * 30).rounded()))
    }
}

/// `ridectl simulate` against the platform: rides booked, driven (with wrong turns and a driver's
/// cancel each), chatted about, rated and paid, none stuck. A suite of its own, beside the
/// serialized lifecycle tests rather than after them: run last of them, it was the test run's end.
struct SimulatorIntegrationTests {
    @Test func theSimulatorCompletesRidesWithNoneStuck() async throws {
        try await withTestBus("simulate") { bus in
            let platform = try await LifecycleIntegrationTests.Platform.start(bus)
            // On Helsinki's streets (the built-in road data), far from the test's own drivers, so they
            // are never offered these rides; every drive takes a wrong turn, so trips re-route.
            let result = try await runCommand(
                Binaries.ridectl,
                [
                    "simulate", "--drivers", "5", "--riders", "3", "--duration", "8", "--grace", "150", "--speedup", "5",
                    "--wrong-turn-rate", "1", "--traffic-rate", "0", "--ingest", platform.tracking.ingest, "--publishable-key",
                    TestTracking.publishableKey,
                    "--share-links", "http://gateway.example", "--driver-cancel-rate", "1",
                ] + bus.ridectlFlags, timeout: .seconds(240))
            #expect(result.status == 0, "\(result.stdout)\n\(result.stderr)")
            #expect(result.stdout.contains("rides stuck (open at the end)"), "\(result.stdout)")
            let report = SimulationReport(text: result.stdout)
            let completed = report.count("rides completed") ?? 0
            #expect(completed >= 3, "\(result.stdout)")
            #expect(result.stdout.contains("reaction ACCEPTED → PICKING_UP"), "\(result.stdout)")
            // The taxi-app features: each ride's two chat messages and two ratings, read back from the platform.
            #expect(report.count("chat messages sent") == 2 * completed, "\(result.stdout)")
            #expect(report.count("ratings given") == 2 * completed, "\(result.stdout)")
            #expect(report.count("offers declined (passed to the next driver)") != nil)
            // Every ride's first driver cancels on the way: each order goes back to dispatch, another driver
            // takes it, and still no ride is stuck.
            #expect((report.count("drivers who cancelled (order re-dispatched)") ?? 0) >= 1, "\(result.stdout)")
            #expect(report.met("rides in the riders' histories"), "every finished ride in a history: \(result.stdout)")
            #expect(report.met("rides paid (drivers' earnings today)"), "every completed ride paid: \(result.stdout)")
            #expect((report.count("wrong turns (trips re-routed)") ?? 0) >= completed, "\(result.stdout)")
            // The trips followed road routes and were re-routed after the wrong turns.
            let trips = try await platform.trips.call("events", #"{"after":0,"limit":1000}"#).body
            let kinds = LifecycleIntegrationTests.values(trips)
            #expect(kinds.contains("rerouted"), "\(Set(kinds))")
            let roadEstimates = (trips["events"]?.arrayValue ?? []).filter { $0["data"]?["data"]?["estimate"]?["estimate_kind"] == "road" }
            #expect(!roadEstimates.isEmpty, "estimates along the roads")
            #expect(
                roadEstimates.allSatisfy {
                    ($0["data"]?["data"]?["estimate"]?["route"]?["polyline"]?["coordinates"]?.arrayValue?.count ?? 0) >= 2
                })
            let links = result.stderr.matches(of: /live at http:\/\/gateway\.example\/ride\/([A-Za-z0-9]{20})\n/)
            #expect((1...3).contains(links.count), "the first rides' share links are printed: \(result.stderr)")
        }
    }
}
