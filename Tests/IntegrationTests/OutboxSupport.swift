import Bus
import Foundation
import Testing
import Wire

/// What the scale-out and failure tests read back: every event of a service's outbox, and the
/// keys that must each appear once.
enum Outboxes {
    /// Every event of a service's outbox, through its `events` op (the broker picks the instance).
    static func events(_ service: TestService) async throws -> [JSONValue] {
        try await events { params in try await service.call("events", params).body }
    }

    /// Every event of an outbox, page by page: `page` answers the `events` op for its params.
    static func events(page: (String) async throws -> JSONValue) async throws -> [JSONValue] {
        var events: [JSONValue] = []
        var after = 0.0
        while true {
            let batch = try await page(#"{"after":\#(Int(after)),"limit":1000}"#)["events"]?.arrayValue ?? []
            events += batch
            guard let last = batch.last?["sequence"]?.numberValue ?? batch.last?["sequence"]?.stringValue.flatMap(Double.init), last > after
            else { return events }
            after = last
        }
    }

    /// `<order>/<STATUS>` of each `order.status` event.
    static func statuses(_ orderEvents: [JSONValue]) -> [String] {
        orderEvents.filter { $0["type"] == "order.status" }.compactMap { event in
            guard let order = event["data"]?["order"]?["id"]?.stringValue, let status = event["data"]?["order"]?["status"]?.stringValue
            else { return nil }
            return "\(order)/\(status)"
        }
    }

    /// `<order>/<leg>` of each `trip.created` event.
    static func legs(_ tripEvents: [JSONValue]) -> [String] {
        tripEvents.filter { $0["type"] == "trip.created" }.compactMap { event in
            guard let metadata = event["data"]?["data"]?["trip_metadata"], let order = metadata["order_id"]?.stringValue else { return nil }
            return "\(order)/\(metadata["leg"]?.stringValue ?? "")"
        }
    }

    /// The order id of each `order.paid` event.
    static func payments(_ orderEvents: [JSONValue]) -> [String] {
        orderEvents.filter { $0["type"] == "order.paid" }.compactMap { $0["data"]?["payment"]?["order_id"]?.stringValue }
    }
}

/// The rows of `ridectl simulate`'s report (`label   result   target`).
struct SimulationReport {
    let text: String

    func row(_ label: String) -> Substring? { text.split(separator: "\n").first { $0.hasPrefix(label) } }

    /// The number that starts the row's result.
    func count(_ label: String) -> Int? { row(label).flatMap { Int($0.dropFirst(label.count).split(separator: " ").first ?? "") } }

    /// Whether the row's target is met.
    func met(_ label: String) -> Bool { row(label)?.contains("✔") == true }

    /// The rows that contain `text`, their runs of spaces squeezed.
    func lines(containing text: String) -> [String] {
        self.text.split(separator: "\n").filter { $0.contains(text) }.map { $0.split(separator: " ").joined(separator: " ") }
    }
}

extension OrdersIntegrationTests.Platform {
    /// `ridectl simulate` against this platform in the background, its riders and drivers in Kyiv
    /// (away from the platform's own test drivers, who are never offered these rides).
    func simulate(drivers: Int, riders: Int, duration: Int, grace: Int = 150, timeout: Duration) -> Task<
        (status: Int32, stdout: String, stderr: String), any Error
    > {
        let arguments =
            [
                "simulate", "--drivers", "\(drivers)", "--riders", "\(riders)", "--duration", "\(duration)", "--grace", "\(grace)",
                "--speedup", "6",
                "--box-km", "1", "--center", "50.4501,30.5234", "--ingest",
                ([tracking] + trackingShards).map(\.ingest).joined(separator: ","), "--publishable-key",
                TestTracking.publishableKey,
                "--share-links", "",
            ] + bus.ridectlFlags
        let (executable, command) = bus.host(of: "simulator").command(Binaries.ridectl, arguments)
        return Task { [environment = bus.environment] in
            try await runCommand(executable, command, environment: environment, timeout: timeout)
        }
    }

    /// Waits until some simulated ride has a driver on the way (the moment to start breaking things).
    func waitUntilRidesAreUnderWay() async throws {
        try await eventually("rides are under way", timeout: .seconds(30)) {
            let page = try await orders.call("events", #"{"after":0,"limit":1000}"#).body
            return (page["events"]?.arrayValue ?? []).contains {
                $0["type"] == "order.status" && $0["data"]?["order"]?["status"] == "PICKING_UP"
            }
        }
    }
}

/// What a failure test counts after its simulation, from the outboxes of orders and trips, and the
/// checks every such test makes: no ride stuck, one trip per leg, each status once, one payment
/// per completed ride, every acknowledged chat message stored.
struct RideTally {
    let report: SimulationReport
    let orderEvents: [JSONValue]
    let tripEvents: [JSONValue]
    let statuses: [String]
    let legs: [String]
    let payments: [String]
    var completed: Int { statuses.filter { $0.hasSuffix("/COMPLETED") }.count }
    var cancelled: Int { statuses.filter { $0.hasSuffix("/CANCELLED") }.count }
    var messages: Int { orderEvents.filter { $0["type"] == "order.message" }.count }

    static func read(_ platform: OrdersIntegrationTests.Platform, report: SimulationReport) async throws -> RideTally {
        RideTally(
            report: report, orderEvents: try await Outboxes.events(platform.orders), tripEvents: try await Outboxes.events(platform.trips))
    }

    /// The tally of these outboxes' events.
    init(report: SimulationReport, orderEvents: [JSONValue], tripEvents: [JSONValue]) {
        self.report = report
        self.orderEvents = orderEvents
        self.tripEvents = tripEvents
        statuses = Outboxes.statuses(orderEvents)
        legs = Outboxes.legs(tripEvents)
        payments = Outboxes.payments(orderEvents)
    }

    /// The orders whose last status is not final, with their statuses in order (what to look at when a ride sticks).
    var openOrders: [String: [String]] {
        var byOrder: [String: [String]] = [:]
        for status in statuses {
            let parts = status.split(separator: "/")
            byOrder[String(parts[0]), default: []].append(String(parts.last ?? ""))
        }
        return byOrder.filter { !["COMPLETED", "CANCELLED"].contains($0.value.last ?? "") }
    }

    /// The events of the order's trips (by their metadata's `order_id`).
    func tripEvents(of orderID: String) -> [JSONValue] {
        tripEvents.filter { $0["data"]?["data"]?["trip_metadata"]?["order_id"]?.stringValue == orderID }
    }

    /// For each open order: its trips' events and what the services logged about it and its trips —
    /// the story of a stuck ride, printed when one sticks.
    func storyOfOpenOrders(_ services: [TestService]) -> String {
        openOrders.keys.sorted().map { orderID in
            let trips = tripEvents(of: orderID)
            let tripIDs = Set(trips.compactMap { $0["data"]?["data"]?["trip_id"]?.stringValue })
            let events = trips.map { "\($0["type"]?.stringValue ?? "?") \($0["data"]?["data"]?["trip_id"]?.stringValue ?? "")" }
            let logs = services.map { service in
                let lines = service.log.split(separator: "\n").filter { line in
                    line.contains(orderID) || tripIDs.contains { line.contains($0) }
                }
                return "  \(service.name): \(lines.count) lines\n"
                    + lines.suffix(15).map { "    \($0.prefix(400))" }.joined(separator: "\n")
            }
            return "open order \(orderID): \(openOrders[orderID] ?? []); trip events \(events)\n" + logs.joined(separator: "\n")
        }.joined(separator: "\n")
    }

    /// Prints the story of each stuck ride (nothing when none is), and one `DIGEST` line per stuck
    /// ride: `make test` repeats those lines at the end of a failed run, where a CI that shows only
    /// the tail of the output still shows them.
    func printStoryOfOpenOrders(_ platform: OrdersIntegrationTests.Platform) async {
        guard !openOrders.isEmpty else { return }
        print(storyOfOpenOrders([platform.orders, platform.trips]) + "\n" + (await devicesOfOpenOrders(platform)))
        for (orderID, statuses) in openOrders.sorted(by: { $0.key < $1.key }) {
            let trips = tripEvents(of: orderID)
            let lastLog = [platform.orders, platform.trips].compactMap { service in
                service.log.split(separator: "\n").last { $0.contains(orderID) }.map { "\(service.name): \($0.suffix(160))" }
            }
            print(
                "DIGEST stuck order \(orderID) \(statuses.joined(separator: ">")); trip events \(trips.compactMap { $0["type"]?.stringValue }); \(lastLog.joined(separator: " | "))"
            )
        }
    }

    /// For each open order's last trip: where its device last was by tracking, against the trip's
    /// destination — whether the car got there (and trips missed it) or never did.
    func devicesOfOpenOrders(_ platform: OrdersIntegrationTests.Platform) async -> String {
        var lines: [String] = []
        for orderID in openOrders.keys.sorted() {
            let created = tripEvents(of: orderID).filter { $0["type"] == "trip.created" }
            guard let tripID = created.last?["data"]?["data"]?["trip_id"]?.stringValue else { continue }
            let trip = (try? await platform.trips.call("get", #"{"trip_id":"\#(tripID)"}"#))?.body ?? .null
            let deviceID = trip["device_id"]?.stringValue ?? "?"
            let device =
                (try? await platform.tracking.callRaw("device", json: #"{"device_id":"\#(deviceID)"}"#)).map {
                    String(decoding: $0.json, as: UTF8.self)
                } ?? "?"
            lines.append(
                "order \(orderID) trip \(tripID): destination \(trip["destination"].map { "\($0)" } ?? "?"); tracking's device \(device.prefix(600))"
            )
        }
        return lines.joined(separator: "\n")
    }

    /// The counts' lines of the printed table.
    var lines: String {
        """
          rides completed \(completed), cancelled \(cancelled), stuck \(report.count("rides stuck (open at the end)") ?? -1)
          trips \(legs.count) for \(Set(legs).count) legs; statuses \(statuses.count), distinct \(Set(statuses).count)
          payments \(payments.count), distinct \(Set(payments).count); chat messages stored \(messages) of \(report.count("chat messages sent") ?? -1) acknowledged
        """
    }

    func expectNothingLostOrDoubled() {
        #expect(completed > 0)
        #expect(report.count("rides stuck (open at the end)") == 0, "open orders: \(openOrders)\n\(report.text)")
        #expect(Set(legs).count == legs.count, "one trip per leg")
        #expect(Set(statuses).count == statuses.count, "each status of an order once")
        #expect(payments.count == completed && Set(payments).count == completed, "one payment per completed ride")
        // At least: a request the apps gave up on (its reply lost in a pause) may still have been stored.
        #expect(messages >= (report.count("chat messages sent") ?? .max), "every acknowledged chat message stored")
    }
}
