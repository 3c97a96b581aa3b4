import Bus
import Foundation
import GRDB
import Geo
import RideContract
import RideModels
import Storage
import Testing
import Wire

@testable import TripsService

/// The trips store's rules, the same on SQLite and PostgreSQL.
@Suite struct TripStorageTests {
    let time = Date(timeIntervalSince1970: 1_790_000_000)

    /// A new trip; `eta`: with an estimate of that many seconds.
    func trip(
        _ id: String, share: String? = nil, device: String = "car-1", metadata: [String: JSONValue]? = ["order_id": "o-1"], eta: Int? = nil
    ) -> LiveTrip {
        var live = LiveTrip(
            starting: Trip(
                tripID: id, shareID: share ?? "s\(id)", deviceID: device, status: .active, startedAt: time,
                destination: .init(geometry: GeoJSONPoint(latitude: 47.84, longitude: 35.11), radius: 30), metadata: metadata))
        live.trip.estimate = eta.map(estimate)
        return live
    }

    func summary(_ live: LiveTrip) -> TripSummary {
        TripSummaryBuilder.summary(
            track: [], deviceID: live.trip.deviceID, startedAt: time, completedAt: time.addingTimeInterval(600), arrival: nil)
    }

    func estimate(_ seconds: Int) -> Trip.Estimate {
        Trip.Estimate(
            arriveAt: time.addingTimeInterval(Double(seconds)),
            route: .init(distance: 10 * seconds, duration: seconds, remainingDuration: seconds))
    }

    func withStore(_ backend: Backend, _ body: (any TripStorage) async throws -> Void) async throws {
        try await withBackend(
            backend, sqlite: { try TripStore(path: $0) }, postgres: { try await PostgresTripStore.open(url: $0, logger: testLogger) }, body)
    }

    func storedEvents(_ store: any TripStorage) async throws -> [CloudEvent<JSONValue>] {
        try await store.eventLog.page(source: BusContract.Service.trips, query: EventsQuery(after: 0, limit: 500)).events
    }

    /// The watcher and the ops read one active trip per event and call: by the primary key, so the
    /// cost does not grow with the trips in flight (a thousand rides read a thousand documents each time).
    @Test func anActiveTripIsReadByItsKey() async throws {
        try await withStore(.sqlite) { store in
            let store = try #require(store as? TripStore)
            for index in 0..<3 { _ = try await store.create(trip("t\(index)", device: "car-\(index)"), idempotencyKey: nil) }
            // EXPLAIN QUERY PLAN's rows: id, parent, notused, detail.
            let plan = try await store.database.read { db in
                try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + TripStore.activeTripByID, arguments: ["t1"]).map { $0[3] as String }
            }
            #expect(plan.contains { $0.contains("USING INDEX sqlite_autoindex_trips_1 (id=?)") }, "\(plan)")
            #expect(try await store.activeTrips(id: "t1").map(\.trip.tripID) == ["t1"])
            #expect(try await store.activeTrips(id: nil).count == 3)
        }
    }

    @Test(arguments: Backend.allCases)
    func anIdempotencyKeyMakesOneTripAndOneCreatedEvent(backend: Backend) async throws {
        try await withStore(backend) { store in
            let first = try await store.create(trip("t1"), idempotencyKey: "o-1/pickup")
            #expect(first.created)
            #expect(first.trip == trip("t1").trip)
            let again = try await store.create(trip("t2", device: "car-2"), idempotencyKey: "o-1/pickup")
            #expect(!again.created)
            #expect(again.trip == first.trip, "the first trip, not the second's document")
            #expect(try await store.trip(id: "t2") == nil, "the repeat stored nothing")
            #expect(try await store.create(trip("t3"), idempotencyKey: nil).created)
            #expect(try await store.create(trip("t4"), idempotencyKey: nil).created, "trips without a key never clash")
            let events = try await storedEvents(store)
            #expect(events.map(\.type) == ["trip.created", "trip.created", "trip.created"])
            #expect(events.map { $0.data["data"]?["trip_id"] } == ["t1", "t3", "t4"])
            #expect(events[0].data["data"]?["trip_metadata"]?["order_id"] == "o-1")
            #expect(events[0].data["device_id"] == "car-1")
        }
    }

    @Test(arguments: Backend.allCases)
    func aTripStartingWithAnEstimateAndAtItsDestinationSaysSo(backend: Backend) async throws {
        try await withStore(backend) { store in
            _ = try await store.create(trip("t1", eta: 120), idempotencyKey: nil)
            var there = trip("t2")
            there.trip.destination.arrivedAt = time
            _ = try await store.create(there, idempotencyKey: nil)
            let events = try await storedEvents(store)
            #expect(events.map(\.type) == ["trip.created", "trip.eta", "trip.created", "trip.destination_arrival"])
            #expect(events[1].data["data"]?["estimate"]?["route"]?["duration"] == 120)
            #expect(events[0].data["data"]?["estimate"] == nil, "only the eta event carries the estimate")
        }
    }

    @Test(arguments: Backend.allCases)
    func tripsAreFoundByIDAndShareID(backend: Backend) async throws {
        try await withStore(backend) { store in
            _ = try await store.create(trip("t1", share: "abcdefg"), idempotencyKey: nil)
            #expect(try await store.trip(id: "t1")?.shareID == "abcdefg")
            #expect(try await store.trip(shareID: "abcdefg")?.tripID == "t1")
            #expect(try await store.trip(id: "nope") == nil)
            #expect(try await store.trip(shareID: "hjkmnpq") == nil)
            // Bad input finds nothing on either database (PostgreSQL's text cannot hold a NUL).
            #expect(try await store.trip(id: "t1\u{0}") == nil)
            #expect(try await store.trip(shareID: "abc\u{0}efg") == nil)
            #expect(try await store.activeTrips(id: "t1\u{0}").isEmpty)
            #expect(try await store.complete(id: "t1\u{0}", at: time, summary: summary(trip("t1"))) == nil)
        }
    }

    @Test(arguments: Backend.allCases)
    func updatesSaveProgressWhileActiveAndArrivalOnce(backend: Backend) async throws {
        try await withStore(backend) { store in
            _ = try await store.create(trip("t1"), idempotencyKey: nil)
            _ = try await store.create(trip("t2", device: "car-2"), idempotencyKey: nil)
            #expect(Set(try await store.activeTrips().map(\.trip.tripID)) == ["t1", "t2"])
            #expect(try await store.activeTripIDs() == ["t1", "t2"])
            #expect(try await store.activeTrips(id: "t2").map(\.trip.deviceID) == ["car-2"])

            var live = try #require(try await store.activeTrips(id: "t1").first)
            #expect(live == trip("t1"))
            live.trip.estimate = estimate(300)
            live.progress.etaInterval = 9
            #expect(try await store.update(live, event: Events.tripETA))
            #expect(try await store.activeTrips(id: "t1").first == live, "document and progress saved")
            live.progress.etaInterval = 7
            #expect(try await store.update(live, event: nil), "progress alone")
            #expect(try await store.activeTrips(id: "t1").first?.progress.etaInterval == 7)

            let stale = live  // another instance's copy, from before the arrival
            live.trip.destination.arrivedAt = time.addingTimeInterval(60)
            live.trip.estimate = nil
            #expect(try await store.update(live, event: Events.tripDestinationArrival))
            #expect(!(try await store.update(live, event: Events.tripDestinationArrival)), "arrival once")
            #expect(!(try await store.update(stale, event: Events.tripETA)), "a copy that missed the arrival changes nothing")
            #expect(try await store.update(live, event: nil), "the arrived copy still saves its progress")
            #expect(try await store.trip(id: "t1")?.destination.arrivedAt == time.addingTimeInterval(60))

            _ = try await store.complete(id: "t1", at: time.addingTimeInterval(600), summary: summary(live))
            #expect(!(try await store.update(live, event: nil)), "a late location after completion changes nothing")
            #expect(try await store.activeTrips().map(\.trip.tripID) == ["t2"])
            #expect(try await store.activeTripIDs() == ["t2"])
            #expect(try await store.activeTrips(id: "t1").isEmpty)
            #expect(
                try await storedEvents(store).map(\.type) == [
                    "trip.created", "trip.created", "trip.eta", "trip.destination_arrival", "trip.completed",
                ])
        }
    }

    /// A destination change is saved only over the destination it was read from, not arrived at;
    /// every copy still heading for the old one is stale from then on.
    @Test(arguments: Backend.allCases)
    func aDestinationChangeMakesOlderCopiesStaleAndIsSavedOnce(backend: Backend) async throws {
        try await withStore(backend) { store in
            let original = trip("t1", eta: 60)
            _ = try await store.create(original, idempotencyKey: nil)
            var changed = original
            changed.trip.destination = .init(geometry: GeoJSONPoint(latitude: 47.85, longitude: 35.12), radius: 30, address: "Elsewhere 1")
            changed.trip.estimate = estimate(200)
            changed.progress.changeDestination(to: Geofence(center: changed.trip.destination.geometry.point, radius: 30))
            #expect(try await store.changeDestination(changed, from: original.trip.destination, events: [Events.tripDestinationChanged]))
            #expect(try await store.activeTrips(id: "t1").first == changed, "document and progress saved")

            var other = changed
            other.trip.destination.address = "A third place"
            #expect(
                !(try await store.changeDestination(other, from: original.trip.destination, events: [Events.tripDestinationChanged])),
                "a second change read from the old destination is refused")
            var stale = original  // another instance's copy, heading for the old destination
            stale.trip.estimate = estimate(30)
            #expect(!(try await store.update(stale, event: Events.tripETA)), "a copy heading for the old destination changes nothing")
            stale.trip.destination.arrivedAt = time
            #expect(!(try await store.update(stale, event: Events.tripDestinationArrival)), "nor does its arrival at the old one")
            #expect(try await store.trip(id: "t1")?.destination.address == "Elsewhere 1")

            var arrived = changed
            arrived.trip.destination.arrivedAt = time.addingTimeInterval(60)
            #expect(try await store.update(arrived, event: Events.tripDestinationArrival), "the new destination's arrival")
            var late = arrived
            late.trip.destination = original.trip.destination
            #expect(
                !(try await store.changeDestination(late, from: changed.trip.destination, events: [Events.tripDestinationChanged])),
                "arrived: no change")

            let events = try await storedEvents(store)
            #expect(events.map(\.type) == ["trip.created", "trip.eta", "trip.destination_changed", "trip.destination_arrival"])
            #expect(events[2].data["data"]?["destination"]?["address"] == "Elsewhere 1")
            #expect(events[2].data["data"]?["estimate"]?["route"]?["duration"] == 200, "the change carries the new estimate")
            #expect(events[2].data["data"]?["value"] == "destination_changed")
        }
    }

    @Test(arguments: Backend.allCases)
    func aTripCompletesOnce(backend: Backend) async throws {
        try await withStore(backend) { store in
            let live = trip("t1", eta: 60)
            _ = try await store.create(live, idempotencyKey: nil)
            let done = time.addingTimeInterval(600)
            let completed = try #require(try await store.complete(id: "t1", at: done, summary: summary(live)))
            #expect(completed.status == .completed)
            #expect(completed.completedAt == done)
            #expect(completed.summary == summary(live))
            #expect(completed.estimate == nil)
            #expect(try await store.trip(id: "t1") == completed)
            let again = try await store.complete(id: "t1", at: done.addingTimeInterval(60), summary: summary(trip("other")))
            #expect(again == completed, "returned as it is")
            #expect(try await store.complete(id: "nope", at: done, summary: summary(live)) == nil)
            let events = try await storedEvents(store)
            #expect(events.map(\.type) == ["trip.created", "trip.eta", "trip.completed"])
            #expect(events[2].data["data"]?["summary"]?["duration"] == 600)
        }
    }

    @Test(arguments: Backend.allCases)
    func eventsAreGapFreeAndPaged(backend: Backend) async throws {
        try await withStore(backend) { store in
            for n in 1...4 { _ = try await store.create(trip("t\(n)"), idempotencyKey: "k\(n % 3)") }
            _ = try await store.complete(id: "t1", at: time, summary: summary(trip("t1")))
            let all = try await storedEvents(store)
            #expect(all.map(\.sequence) == [1, 2, 3, 4], "the repeated key (t4) appended nothing")
            let page = try await store.eventLog.page(source: BusContract.Service.trips, query: EventsQuery(after: 2, limit: 1))
            #expect(page.events.map(\.sequence) == [3])
            #expect(page.events.first?.source == BusContract.Service.trips)
            #expect(page.lastSequence == 4)
        }
    }

    /// Metadata is the caller's JSON: a "\u0000" in it is stored and updated like any other text
    /// (PostgreSQL's jsonb would refuse it, so the store must not parse documents as jsonb).
    @Test(arguments: Backend.allCases)
    func metadataWithANulCharacterIsKept(backend: Backend) async throws {
        try await withStore(backend) { store in
            var live = trip("t1", metadata: ["note": "a\u{0}b"])
            _ = try await store.create(live, idempotencyKey: nil)
            live.trip.destination.arrivedAt = time
            #expect(try await store.update(live, event: Events.tripDestinationArrival))
            #expect(try await store.complete(id: "t1", at: time, summary: summary(live))?.metadata?["note"] == "a\u{0}b")
        }
    }

    /// Instances given the same request at once (a client retrying through another): one trip.
    @Test(arguments: Backend.allCases)
    func concurrentCreatesWithOneKeyMakeOneTrip(backend: Backend) async throws {
        try await withStore(backend) { store in
            let attempts = (0..<8).map { trip("t\($0)") }
            let results = try await withThrowingTaskGroup(of: (trip: Trip, created: Bool).self) { group in
                for attempt in attempts { group.addTask { try await store.create(attempt, idempotencyKey: "same") } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(results.filter { $0.created }.count == 1)
            #expect(Set(results.map { $0.trip.tripID }).count == 1, "every caller got the one trip")
            #expect(try await store.activeTrips().count == 1)
            #expect(try await storedEvents(store).map(\.type) == ["trip.created"])
        }
    }

    /// Every instance watches every trip, so several report the arrival, and several may complete
    /// it: each event is stored once.
    @Test(arguments: Backend.allCases)
    func concurrentArrivalsAndCompletionsAreStoredOnce(backend: Backend) async throws {
        try await withStore(backend) { store in
            let live = trip("t1")
            _ = try await store.create(live, idempotencyKey: nil)
            var arrived = live
            arrived.trip.destination.arrivedAt = time
            let updated = try await withThrowingTaskGroup(of: Bool.self) { group in
                for _ in 0..<8 { group.addTask { [arrived] in try await store.update(arrived, event: Events.tripDestinationArrival) } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(updated.filter { $0 }.count == 1)
            let (ended, done) = (summary(live), time.addingTimeInterval(600))
            let completed = try await withThrowingTaskGroup(of: Trip?.self) { group in
                for n in 0..<8 {
                    group.addTask { try await store.complete(id: "t1", at: done.addingTimeInterval(Double(n)), summary: ended) }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(Set(completed.map { $0?.completedAt }).count == 1, "every caller got the one completion")
            #expect(try await storedEvents(store).map(\.type) == ["trip.created", "trip.destination_arrival", "trip.completed"])
        }
    }
}

extension PostgresTripStore: PostgresBacked {}
