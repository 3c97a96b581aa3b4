import Bus
import Foundation
import Geo
import RideModels
import ServiceKit
import Testing
import TrackingSDK
import Wire

/// `ride-trips` with the real `ride-tracking` whose device topics it watches.
@Suite(.serialized) struct TripsIntegrationTests {
    static let origin = GeoPoint(latitude: 47.8359, longitude: 35.1146)
    static let destination = origin.destination(bearing: 0, distance: 1000)

    /// Sends `count` fixes of `device` northwards from `origin`, 10 m and 1 s apart from `start`.
    static func drive(_ tracking: TestTracking, device: String, from first: Int, count: Int, start: Date, batch: UInt64) async throws {
        let fixes = (first..<(first + count)).map { step in
            let point = origin.destination(bearing: 0, distance: Double(step) * 10)
            return DeviceLocation(
                latitude: point.latitude, longitude: point.longitude, recordedAt: start.addingTimeInterval(Double(step)), accuracy: 5,
                speed: 10)
        }
        _ = try await tracking.call(
            "ingest", IngestBatch(publishableKey: TestTracking.publishableKey, deviceID: device, batchID: batch, locations: fixes),
            as: IngestAck.self)
    }

    static func create(_ trips: TestService, device: String, key: String) async throws -> (status: Int, body: JSONValue) {
        try await trips.call(
            "create",
            #"{"device_id":"\#(device)","destination":{"geometry":{"type":"Point","coordinates":[\#(destination.longitude),\#(destination.latitude)]},"radius":30},"metadata":{"order_id":"o-1"},"idempotency_key":"\#(key)"}"#
        )
    }

    @Test func aTripEstimatesArrivesOnceAndCompletesWithItsSummary() async throws {
        try await withTestBus("trips") { bus in
            let events = try await EventSubscriber<TripEvent>(endpoint: bus.egress, prefixes: ["trip."], logger: testLogger)
            let tracking = try await TestTracking.start(on: bus)
            let trips = try await TestService.trips(on: bus)
            let start = Date()
            try await Self.drive(tracking, device: "car-1", from: 0, count: 1, start: start, batch: 1)

            let created = try await Self.create(trips, device: "car-1", key: "o-1/pickup")
            #expect(created.status == 201, "\(created.body)")
            guard case .string(let tripID)? = created.body["trip_id"], case .string(let shareID)? = created.body["share_id"] else {
                throw TestFailure("no ids: \(created.body)")
            }
            #expect(shareID.count == 7)
            #expect(created.body["views"]?["share_url"] == .string("/\(shareID)"))
            // 1 000 m × 1.3 at the device's 10 m/s.
            #expect(created.body["estimate"]?["route"]?["distance"] == 1300)
            #expect(created.body["estimate"]?["route"]?["duration"] == 130)
            let again = try await Self.create(trips, device: "car-1", key: "o-1/pickup")
            #expect(again.status == 200)
            #expect(again.body["trip_id"] == .string(tripID), "the idempotency key returns the first trip")

            // Drive to the destination and 10 fixes beyond it inside the fence: one arrival.
            try await Self.drive(tracking, device: "car-1", from: 1, count: 50, start: start, batch: 2)
            try await Self.drive(tracking, device: "car-1", from: 51, count: 52, start: start, batch: 3)
            let arrived = try await collect(events, count: 2).map(\.event.data.data.value)
            #expect(arrived.first == "created")
            try await eventually("the arrival is stored") {
                try await trips.call("get", #"{"trip_id":"\#(tripID)"}"#).body["destination"]?["arrived_at"]?.stringValue != nil
            }

            let completed = try await trips.call("complete", #"{"trip_id":"\#(tripID)"}"#)
            #expect(completed.body["status"] == "completed")
            let distance = completed.body["summary"]?["distance"]?.numberValue ?? 0
            #expect(abs(distance - 1020) / 1020 < 0.05, "summary distance \(distance) for a 1 020 m drive")
            #expect(completed.body["summary"]?["markers"]?[0]?["type"] == "arrival")
            #expect(
                (try await trips.call("complete", #"{"trip_id":"\#(tripID)"}"#)).body["completed_at"] == completed.body["completed_at"],
                "idempotent")
            #expect(try await trips.call("get_by_share", #"{"share_id":"\#(shareID)"}"#).body["trip_id"] == .string(tripID))

            let page = try await trips.call("events", #"{"after":0}"#)
            let values =
                (page.body["events"].flatMap { events -> [String]? in
                    guard case .array(let list) = events else { return nil }
                    return list.compactMap { $0["data"]?["data"]?["value"]?.stringValue }
                }) ?? []
            #expect(values.filter { $0 == "destination_arrival" }.count == 1, "\(values)")
            #expect(values.first == "created" && values.last == "completed", "\(values)")
            #expect(values.filter { $0 == "created" }.count == 1, "the repeated create stored nothing")
            await events.close()
        }
    }

    @Test func badInputIsNamedAndARestartCatchesUpOnTheArrival() async throws {
        try await withTestBus("trips-restart") { bus in
            let tracking = try await TestTracking.start(on: bus)
            let trips = try await TestService.trips(on: bus)
            for (json, field) in [
                (#"{"device_id":"has space","destination":{"geometry":{"type":"Point","coordinates":[35,47]}}}"#, "device_id"),
                (#"{"device_id":"d","destination":{"geometry":{"type":"Point","coordinates":[35,97]}}}"#, "destination.geometry"),
                (#"{"device_id":"d","destination":{"geometry":{"type":"Point","coordinates":[35,47]},"radius":1}}"#, "destination.radius"),
                (#"{"device_id":"d"}"#, "destination"),
            ] {
                let reply = try await trips.call("create", json)
                #expect(reply.status == 422, "\(json)")
                #expect(reply.body["error"]?["message"]?.stringValue?.contains(field) == true, "\(reply.body)")
            }
            #expect(try await trips.call("get", #"{"trip_id":"nope"}"#).status == 404)
            #expect(try await trips.call("get_by_share", #"{"share_id":"../../x"}"#).status == 404)

            let start = Date()
            let created = try await Self.create(trips, device: "car-2", key: "o-2/pickup")
            guard case .string(let tripID)? = created.body["trip_id"] else { throw TestFailure("no trip: \(created.body)") }
            bus.supervisor.signal(trips.name, SIGKILL)
            _ = await bus.supervisor.waitForExit(trips.name, timeout: .seconds(5))
            // The device arrives while trips is down; tracking keeps the history.
            try await Self.drive(tracking, device: "car-2", from: 0, count: 101, start: start, batch: 1)
            try await trips.startProcess()
            try await eventually("the restarted service finds the arrival in the history") {
                try await trips.call("get", #"{"trip_id":"\#(tripID)"}"#).body["destination"]?["arrived_at"]?.stringValue != nil
            }
            let page = try await trips.call("events", #"{"after":0}"#)
            #expect(page.body["last_sequence"] == 2, "created, then one arrival")
        }
    }

    /// A car parks at the destination while the bus is down, and says nothing more: tracking stores
    /// its fixes and queues their events for the bus, then is killed before the bus is back, so the
    /// arrival is never delivered. Trips finds it in tracking's history once the device has been
    /// quiet for a while (nothing else would ever bring it).
    @Test func anArrivalTheBusLostIsFoundInTheHistoryOfAQuietDevice() async throws {
        try await withTestBus("trips-quiet") { bus in
            let tracking = try await TestTracking.start(on: bus)
            let trips = try await TestService.trips(on: bus)
            let created = try await Self.create(trips, device: "car-3", key: "o-3/pickup")
            guard case .string(let tripID)? = created.body["trip_id"] else { throw TestFailure("no trip: \(created.body)") }
            bus.supervisor.signal("bus", SIGKILL)
            _ = await bus.supervisor.waitForExit("bus", timeout: .seconds(5))
            // Straight to tracking's ingest (not through the bus): stored, its events queued for the bus.
            let device = try TrackingDevice(
                id: "car-3", configuration: tracking.sdkConfiguration(), provider: FixedLocation(Self.destination))
            device.startTracking()
            try await eventually("tracking stored the parked car's fixes") { device.statistics.acknowledged >= 3 }
            await device.close()
            bus.supervisor.signal(tracking.name, SIGKILL)  // and the queued events with it
            _ = await bus.supervisor.waitForExit(tracking.name, timeout: .seconds(5))
            try await bus.startProcess()
            try await tracking.startProcess()
            try await eventually("trips finds the arrival in tracking's history", timeout: .seconds(40)) {
                try await trips.call("get", #"{"trip_id":"\#(tripID)"}"#).body["destination"]?["arrived_at"]?.stringValue != nil
            }
            // The catch-up logs once it has stored the arrival, so the line may come a moment after.
            try await eventually("the catch-up, not the bus, found it", timeout: .seconds(5)) {
                trips.log.contains("an arrival found in tracking's history")
            }
        }
    }
}
