import Bus
import Foundation
import Geo
import RideModels
import Testing
import Wire

@testable import TrackingService

private let now = Date(timeIntervalSince1970: 1_795_253_400)

private func fix(_ lat: Double, _ lon: Double, at offset: TimeInterval = 0) -> DeviceLocation {
    DeviceLocation(latitude: lat, longitude: lon, recordedAt: now.addingTimeInterval(offset), accuracy: 5, speed: 10)
}

@Suite struct LocationRulesTests {
    let rules = LocationRules()

    @Test(
        arguments: [
            (DeviceLocation(latitude: 91, longitude: 0, recordedAt: now), "latitude"),
            (DeviceLocation(latitude: .nan, longitude: 0, recordedAt: now), "latitude"),
            (DeviceLocation(latitude: 0, longitude: -180.5, recordedAt: now), "longitude"),
            (DeviceLocation(latitude: 0, longitude: .infinity, recordedAt: now), "longitude"),
            (DeviceLocation(latitude: 0, longitude: 0, recordedAt: now.addingTimeInterval(301)), "recorded_at"),
            (DeviceLocation(latitude: 0, longitude: 0, recordedAt: now.addingTimeInterval(-8 * 86400)), "recorded_at"),
            (DeviceLocation(latitude: 0, longitude: 0, recordedAt: now, accuracy: -1), "accuracy"),
            (DeviceLocation(latitude: 0, longitude: 0, recordedAt: now, accuracy: 6000), "accuracy"),
            (DeviceLocation(latitude: 0, longitude: 0, recordedAt: now, speed: 150), "speed"),
            (DeviceLocation(latitude: 0, longitude: 0, recordedAt: now, bearing: 360), "bearing"),
            (DeviceLocation(latitude: 0, longitude: 0, recordedAt: now, altitude: .nan), "altitude"),
        ] as [(DeviceLocation, String)])
    func eachRuleNamesItsField(location: DeviceLocation, field: String) {
        #expect(rules.problem(with: location, now: now)?.field == field)
    }

    @Test func fineLocationsPass() {
        #expect(rules.problem(with: fix(47.8, 35.1), now: now) == nil)
        #expect(
            rules.problem(with: DeviceLocation(latitude: -90, longitude: 180, recordedAt: now.addingTimeInterval(299)), now: now) == nil)
    }

    @Test func aBatchKeepsItsGoodItemsSortedAndNamesTheBadOnes() {
        let batch = IngestBatch(
            publishableKey: "k", batchID: 1, locations: [fix(1, 1, at: 2), fix(100, 1), fix(1, 1, at: 1)],
            geotags: [GeotagRecord(metadata: [:], location: fix(1, 400))])
        let checked = rules.check(batch, now: now)
        #expect(checked.locations.map(\.recordedAt) == [now.addingTimeInterval(1), now.addingTimeInterval(2)])
        #expect(
            checked.rejected == [
                RejectedItem(
                    kind: "location", index: 1, field: "locations[1].latitude", reason: "must be a number from -90 to 90, got 100.0"),
                RejectedItem(
                    kind: "geotag", index: 0, field: "geotags[0].location.longitude", reason: "must be a number from -180 to 180, got 400.0"
                ),
            ])
        var big = LocationRules()
        big.maximumBatchSize = 2
        #expect(big.problem(withSize: batch) != nil)
    }

    @Test func deviceIDs() {
        #expect(DeviceIdentity.problem(with: "2744A672-D4A9-36E7-BC89-FDAA704114A8") == nil)
        #expect(DeviceIdentity.problem(with: "") != nil)
        #expect(DeviceIdentity.problem(with: "has space") != nil)
        #expect(DeviceIdentity.problem(with: String(repeating: "x", count: 129)) != nil)
    }
}

@Suite struct TrackingCoreTests {
    @Test func aFirstBatchCreatesTheDeviceIndexesItAndPublishesInSequence() {
        var core = TrackingCore()
        let change = core.apply(
            deviceID: "d1", intents: DeviceIntents(name: "Ann", tracking: true, available: true, changedAt: now),
            locations: [fix(47.8, 35.1), fix(47.81, 35.1, at: 1)], now: now)
        #expect(change.record.name == "Ann")
        #expect(change.record.activity == .active)
        #expect(change.events.map(\.sequence) == [1, 2, 3])
        #expect(change.events.map(\.topic) == ["device.location.d1", "device.location.d1", "device.status.d1"])
        #expect(core.position(of: "d1") == GeoPoint(latitude: 47.81, longitude: 35.1))
    }

    @Test func olderOrRepeatedLocationsAreHistoryNotEvents() {
        var core = TrackingCore()
        _ = core.apply(deviceID: "d", intents: DeviceIntents(tracking: true, changedAt: now), locations: [fix(1, 1, at: 10)], now: now)
        let late = core.apply(deviceID: "d", intents: nil, locations: [fix(2, 2, at: 5), fix(1, 1, at: 10)], now: now)
        #expect(late.events.isEmpty)
        #expect(late.record.latest?.recordedAt == now.addingTimeInterval(10))
        #expect(core.position(of: "d") == GeoPoint(latitude: 1, longitude: 1))
    }

    @Test func theNewerIntentsWin() {
        var core = TrackingCore()
        _ = core.apply(deviceID: "d", intents: DeviceIntents(available: true, changedAt: now), locations: [], now: now)
        let stale = core.apply(
            deviceID: "d", intents: DeviceIntents(available: false, changedAt: now.addingTimeInterval(-5)), locations: [], now: now)
        #expect(stale.record.available)
        let fresh = core.apply(
            deviceID: "d", intents: DeviceIntents(available: false, changedAt: now.addingTimeInterval(5)), locations: [], now: now)
        #expect(!fresh.record.available)
    }

    @Test func silenceMakesADeviceInactiveAndALocationMakesItActiveAgain() {
        var core = TrackingCore()
        _ = core.apply(deviceID: "d", intents: DeviceIntents(tracking: true, changedAt: now), locations: [fix(1, 1)], now: now)
        #expect(core.sweep(now: now.addingTimeInterval(30), inactiveAfter: 60).isEmpty)
        let swept = core.sweep(now: now.addingTimeInterval(61), inactiveAfter: 60)
        #expect(swept.count == 1)
        #expect(
            swept[0].events.first?.payload
                == .status(DeviceStatusEvent(deviceID: "d", value: .inactive, available: false, reason: "silence")))
        let back = core.apply(deviceID: "d", intents: nil, locations: [fix(1, 1, at: 70)], now: now.addingTimeInterval(70))
        #expect(back.record.activity == .active)
        #expect(back.events.last?.payload == .status(DeviceStatusEvent(deviceID: "d", value: .active, available: false)))
    }

    @Test func stoppingTrackingMakesItInactive() {
        var core = TrackingCore()
        _ = core.apply(deviceID: "d", intents: DeviceIntents(tracking: true, changedAt: now), locations: [fix(1, 1)], now: now)
        let stopped = core.apply(
            deviceID: "d", intents: DeviceIntents(tracking: false, changedAt: now.addingTimeInterval(1)), locations: [], now: now)
        #expect(stopped.record.activity == .inactive)
        #expect(stopped.events.map(\.type) == ["device.status"])
    }

    @Test func availabilityFromTheServerSide() {
        var core = TrackingCore()
        #expect(core.setAvailability(deviceID: "nobody", available: true, now: now) == nil)
        _ = core.apply(deviceID: "d", intents: nil, locations: [fix(1, 1)], now: now)
        let change = core.setAvailability(deviceID: "d", available: true, now: now)
        #expect(change?.record.available == true)
        #expect(change?.events.count == 1)
        #expect(core.setAvailability(deviceID: "d", available: true, now: now)?.events.isEmpty == true)
    }

    /// The platform's word on a device's tracking, which answers its sync: the newest command kept.
    @Test func trackingCommandsAreKeptNewestFirst() {
        var core = TrackingCore()
        #expect(core.command(deviceID: "nobody", tracking: true, issuedAt: now) == nil)
        _ = core.apply(deviceID: "d", intents: nil, locations: [fix(1, 1)], now: now)
        #expect(core.record("d")?.platformTracking == false, "never commanded: no ride")
        #expect(core.command(deviceID: "d", tracking: true, issuedAt: now)?.record.platformTracking == true)
        #expect(core.command(deviceID: "d", tracking: false, issuedAt: now.addingTimeInterval(-5)) == nil, "the last ride's late stop")
        #expect(core.record("d")?.platformTracking == true)
        let stopped = core.command(deviceID: "d", tracking: false, issuedAt: now.addingTimeInterval(5))
        #expect(stopped?.record.platformTracking == false && stopped?.events.isEmpty == true)
        #expect(core.record("d")?.platformTrackingAt == now.addingTimeInterval(5))
    }

    @Test func nearbyAppliesEveryFilter() {
        var core = TrackingCore()
        let center = GeoPoint(latitude: 47.8, longitude: 35.1)
        for i in 0..<10 {
            let p = center.destination(bearing: Double(i) * 36, distance: Double(i + 1) * 100)
            _ = core.apply(
                deviceID: "d\(i)",
                intents: DeviceIntents(
                    metadata: ["car": ["model": i % 2 == 0 ? "Prius" : "Leaf", "seats": 4]],
                    available: i < 5, changedAt: now),
                locations: [
                    DeviceLocation(latitude: p.latitude, longitude: p.longitude, recordedAt: now.addingTimeInterval(-Double(i) * 3600))
                ],
                now: now)
        }
        let query = NearbyQuery(location: GeoJSONPoint(center), radius: 2000)
        #expect(core.nearby(query, now: now).map(\.deviceID) == (0..<10).map { "d\($0)" })
        #expect(core.nearby(NearbyQuery(location: GeoJSONPoint(center), radius: 350), now: now).map(\.deviceID) == ["d0", "d1", "d2"])
        #expect(core.nearby(NearbyQuery(location: GeoJSONPoint(center), radius: 2000, limit: 2), now: now).count == 2)
        #expect(
            core.nearby(NearbyQuery(location: GeoJSONPoint(center), radius: 2000, availableOnly: true), now: now).map(\.deviceID) == [
                "d0", "d1", "d2", "d3", "d4",
            ])
        #expect(
            core.nearby(NearbyQuery(location: GeoJSONPoint(center), radius: 2000, lastUpdatedWithin: 2.5), now: now).map(\.deviceID) == [
                "d0", "d1", "d2",
            ])
        #expect(
            core.nearby(NearbyQuery(location: GeoJSONPoint(center), radius: 2000, metadata: ["car": ["model": "Leaf"]]), now: now).map(
                \.deviceID)
                == ["d1", "d3", "d5", "d7", "d9"])
        #expect(
            core.nearby(NearbyQuery(location: GeoJSONPoint(center), radius: 2000, devices: ["d9", "d4"]), now: now).map(\.deviceID) == [
                "d4", "d9",
            ])
        let first = core.nearby(query, now: now)[0]
        #expect(abs(first.distance - 100) < 0.5)
    }

    @Test func aRestoredCoreKnowsItsDevicesAndPositions() {
        var record = DeviceRecord(id: "d")
        record.latest = fix(10, 20)
        record.sequence = 41
        var core = TrackingCore(devices: [record])
        #expect(core.indexedCount == 1)
        let next = core.apply(deviceID: "d", intents: nil, locations: [fix(10, 21, at: 1)], now: now)
        #expect(next.events.first?.sequence == 42, "sequences continue after a restart")
    }
}

@Suite struct DeviceEventEncodingTests {
    @Test(arguments: [
        DeviceLocation(latitude: 47.8479, longitude: 35.1235, recordedAt: now, accuracy: 5, speed: 8.25, bearing: 44.945154),
        DeviceLocation(latitude: -33.9, longitude: 151.2, recordedAt: now.addingTimeInterval(0.123)),
        DeviceLocation(latitude: 0, longitude: -0.0001, recordedAt: now, accuracy: 1e-7, speed: 0, bearing: 359.99),
    ])
    func theHandWrittenLocationEventIsWhatTheEncoderWouldWrite(location: DeviceLocation) throws {
        let event = DeviceLocationEvent(deviceID: "car \"7\"", location: location)
        let fast = event.jsonBytes
        let standard = Array(try JSONCoding.encoder().encode(event))
        #expect(String(decoding: fast, as: UTF8.self) == String(decoding: standard, as: UTF8.self))
        let decoded = try JSONCoding.decode(DeviceLocationEvent.self, from: fast)
        #expect(decoded == (try JSONCoding.decode(DeviceLocationEvent.self, from: standard)))
        #expect(decoded.deviceID == event.deviceID && decoded.location == event.location && decoded.speed == event.speed)
        #expect(abs(decoded.recordedAt.timeIntervalSince(event.recordedAt)) < 0.001)
    }
}
