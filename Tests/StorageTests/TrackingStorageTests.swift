import Foundation
import RideModels
import Storage
import Testing

@testable import TrackingService

/// Tracking's store on both databases: devices come back as stored, history is kept once per
/// (device, time) whatever is sent again, absent readings stay absent, and a range read is
/// oldest first and limited.
@Suite struct TrackingStorageTests {
    static func store(_ backend: Backend, _ body: (any TrackingStore) async throws -> Void) async throws {
        let sqlite: (String) throws -> any TrackingStore = { try SQLiteTrackingStore(path: $0) }
        let postgres: (PostgresURL) async throws -> any TrackingStore = {
            try await PostgresTrackingStore.open(url: $0, logger: testLogger)
        }
        try await withBackend(backend, sqlite: sqlite, postgres: postgres, body)
    }

    static let start = Date(timeIntervalSince1970: 1_790_000_000)

    /// `commit` blocks its thread until the transaction ends, as the writer's own thread may; here
    /// it gets a thread of its own too (two PostgreSQL cases blocking both of the cooperative pool's
    /// threads would leave the transaction no thread to run on).
    static func commit(_ store: any TrackingStore, _ writes: [TrackingWrite]) async throws {
        try await withCheckedThrowingContinuation { (done: CheckedContinuation<Void, any Error>) in
            Thread.detachNewThread { done.resume(with: Result { try store.commit(writes) }) }
        }
    }

    static func location(_ second: Int, full: Bool) -> DeviceLocation {
        DeviceLocation(
            latitude: 50.45 + Double(second) / 10_000, longitude: 30.52, recordedAt: start.addingTimeInterval(Double(second)),
            accuracy: full ? 4.5 : nil, speed: full ? 11 : nil, bearing: full ? 90 : nil, altitude: full ? 120 : nil,
            mocked: full ? true : nil)
    }

    @Test(arguments: Backend.allCases)
    func devicesAndHistoryComeBackAsStoredAndOnlyOnce(backend: Backend) async throws {
        try await Self.store(backend) { store in
            var driver = DeviceRecord(id: "driver-1")
            driver.name = "Dan's phone"
            driver.metadata = ["user_id": "d-1", "fleet": ["size": 3]]
            driver.available = true
            driver.tracking = true
            driver.intentsChangedAt = Self.start
            driver.activity = .active
            driver.lastSeen = Self.start.addingTimeInterval(2)
            driver.sequence = 7
            driver.latest = Self.location(2, full: true)
            driver.platformTracking = true
            driver.platformTrackingAt = Self.start.addingTimeInterval(1)
            let first = (0...2).map { Self.location($0, full: $0 % 2 == 0) }
            let geotag = GeotagRecord(metadata: ["order_id": "o-1"], location: Self.location(1, full: false))
            var rider = DeviceRecord(id: "rider-1")
            rider.intentsChangedAt = Self.start
            try await Self.commit(
                store, [TrackingWrite(record: driver, locations: first, geotags: [geotag]), TrackingWrite(record: rider)])

            // Sent again (a phone that did not hear the acknowledgement), plus one new location;
            // only the moving parts of the record change.
            driver.sequence = 8
            driver.latest = Self.location(3, full: false)
            driver.name = "not stored: intents unchanged"
            try await Self.commit(
                store,
                [
                    TrackingWrite(
                        record: driver, intentsChanged: false, locations: first + [Self.location(3, full: false)], geotags: [geotag])
                ])

            let devices = try await store.loadDevices().sorted { $0.id < $1.id }
            #expect(devices.map(\.id) == ["driver-1", "rider-1"])
            let loaded = try #require(devices.first)
            #expect(loaded.name == "Dan's phone")
            #expect(loaded.metadata == ["user_id": "d-1", "fleet": ["size": 3]])
            #expect(loaded.available && loaded.tracking && loaded.activity == .active)
            #expect(loaded.sequence == 8)
            #expect(loaded.intentsChangedAt == Self.start && loaded.lastSeen == Self.start.addingTimeInterval(2))
            #expect(loaded.latest?.recordedAt == Self.start.addingTimeInterval(3) && loaded.latest?.accuracy == nil)
            #expect(devices[1].latest == nil && devices[1].name == nil && !devices[1].available)
            #expect(
                loaded.platformTracking && loaded.platformTrackingAt == Self.start.addingTimeInterval(1), "the platform's word on tracking")
            #expect(!devices[1].platformTracking && devices[1].platformTrackingAt == nil)

            let history = try await store.history(deviceID: "driver-1", from: nil, to: nil, limit: 100)
            #expect(history.locations == first + [Self.location(3, full: false)], "each location once, oldest first, readings as sent")
            #expect(history.geotags == [geotag])
            let window = try await store.history(
                deviceID: "driver-1", from: Self.start.addingTimeInterval(1), to: Self.start.addingTimeInterval(3), limit: 2)
            #expect(window.locations.map(\.recordedAt) == [1, 2].map { Self.start.addingTimeInterval($0) })
            #expect(try await store.history(deviceID: "nobody", from: nil, to: nil, limit: 10).locations.isEmpty)
        }
    }

    /// A group commit often holds a device more than once (its phone sent two batches): the
    /// device ends in its last state, and one created or renamed earlier in the group keeps that.
    @Test(arguments: Backend.allCases)
    func aDeviceWrittenSeveralTimesInOneCommitEndsInItsLastState(backend: Backend) async throws {
        try await Self.store(backend) { store in
            var car = DeviceRecord(id: "car")
            car.name = "Car"
            car.intentsChangedAt = Self.start
            try await Self.commit(store, [TrackingWrite(record: car)])
            var first = car
            var second = car
            (first.sequence, first.latest, first.lastSeen) = (1, Self.location(1, full: true), Self.start.addingTimeInterval(1))
            (second.sequence, second.latest, second.lastSeen, second.activity) = (
                2, Self.location(2, full: false), Self.start.addingTimeInterval(2), .active
            )
            var bike = DeviceRecord(id: "bike")
            (bike.name, bike.available, bike.intentsChangedAt, bike.sequence, bike.latest) = (
                "Bike", true, Self.start, 1, Self.location(1, full: false)
            )
            var bikeLater = bike
            (bikeLater.sequence, bikeLater.latest) = (2, Self.location(2, full: true))
            try await Self.commit(
                store,
                [
                    TrackingWrite(record: first, intentsChanged: false, locations: [Self.location(1, full: true)]),
                    TrackingWrite(record: bike),
                    TrackingWrite(record: second, intentsChanged: false, locations: [Self.location(2, full: false)]),
                    TrackingWrite(record: bikeLater, intentsChanged: false, locations: [Self.location(2, full: true)]),
                ])
            let devices = Dictionary(uniqueKeysWithValues: try await store.loadDevices().map { ($0.id, $0) })
            let (storedCar, storedBike) = (try #require(devices["car"]), try #require(devices["bike"]))
            #expect(storedCar.sequence == 2 && storedCar.activity == .active && storedCar.name == "Car")
            #expect(storedCar.lastSeen == Self.start.addingTimeInterval(2))
            #expect(
                storedCar.latest?.recordedAt == Self.start.addingTimeInterval(2) && storedCar.latest?.accuracy == nil
                    && storedCar.latest?.speed == nil)
            #expect(storedBike.name == "Bike" && storedBike.available && storedBike.sequence == 2 && storedBike.lastSeen == nil)
            #expect(
                storedBike.latest?.recordedAt == Self.start.addingTimeInterval(2) && storedBike.latest?.accuracy == 4.5
                    && storedBike.latest?.bearing == 90)
            #expect(try await store.history(deviceID: "car", from: nil, to: nil, limit: 10).locations.count == 2)
        }
    }
}

extension PostgresTrackingStore: PostgresBacked {}
