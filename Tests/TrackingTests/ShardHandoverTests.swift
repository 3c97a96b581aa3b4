import Foundation
import Geo
import RideModels
import Testing
import TrackingService
import Wire

/// Which shard serves a device as shards go down and come back (`DeviceShards.ranking`,
/// `ShardOwnership`), and what a shard's core does with devices it hands over or takes.
@Suite struct ShardHandoverTests {
    static let ids = (0..<4_000).map { "driver-\($0)" }

    @Test func aRankingStartsAtTheHomeShardAndNamesEveryShardOnce() {
        let four = DeviceShards(count: 4)
        for id in Self.ids.prefix(200) {
            let ranking = four.ranking(of: id)
            #expect(ranking.first == four.owner(of: id))
            #expect(ranking.sorted() == [0, 1, 2, 3])
        }
        #expect(DeviceShards(count: 1).ranking(of: "a") == [0])
    }

    @Test func withEveryShardUpEachDeviceStaysHome() {
        let four = DeviceShards(count: 4)
        for id in Self.ids { #expect(four.owner(of: id, live: [0, 1, 2, 3]) == four.owner(of: id)) }
    }

    @Test func aDownShardsDevicesSpreadOverTheOthersAndNoOtherDeviceMoves() {
        let four = DeviceShards(count: 4)
        var taken = [0, 0, 0, 0]
        for id in Self.ids {
            let home = four.owner(of: id)
            let serving = four.owner(of: id, live: [0, 1, 3])
            if home == 2 {
                #expect(serving != 2)
                taken[serving] += 1
            } else {
                #expect(serving == home, "\(id) moved although its home is up")
            }
        }
        // About a third each of shard 2's ~1 000 devices: rendezvous hashing spreads them.
        #expect([taken[0], taken[1], taken[3]].allSatisfy { $0 > 250 }, "\(taken)")
        // Two down: each device goes to the first live shard of its ranking.
        for id in Self.ids.prefix(500) {
            let serving = four.owner(of: id, live: [1, 3])
            #expect(serving == four.ranking(of: id).first { [1, 3].contains($0) })
        }
    }

    @Test func aShardThatStartsTakesBackOnlyItsOwnDevices() {
        // Of 4 planned shards 3 run; the 4th starting moves exactly the devices whose home it is.
        let four = DeviceShards(count: 4)
        for id in Self.ids {
            let before = four.owner(of: id, live: [0, 1, 2])
            let after = four.owner(of: id, live: [0, 1, 2, 3])
            #expect(before == after || after == 3, "\(id): \(before) → \(after)")
            if four.owner(of: id) == 3 { #expect(after == 3) }
        }
    }

    @Test func ownershipFollowsTheLiveShards() {
        let ownership = ShardOwnership(shard: DeviceShard(index: 0, of: DeviceShards(count: 2)))
        let ofShard1 = Self.ids.first { DeviceShards(count: 2).owner(of: $0) == 1 }!
        #expect(!ownership.owns(ofShard1))
        #expect(ownership.setLive([]))
        #expect(ownership.liveShards == [0], "a shard always counts itself up")
        #expect(ownership.owns(ofShard1))
        #expect(!ownership.setLive([]), "no change")
        #expect(ownership.setLive([1]))
        #expect(!ownership.owns(ofShard1))
        #expect(ShardOwnership.unsharded.owns(ofShard1))
    }

    static func record(_ id: String, at point: GeoPoint, sequence: UInt64) -> DeviceRecord {
        var record = DeviceRecord(id: id)
        record.latest = DeviceLocation(latitude: point.latitude, longitude: point.longitude, recordedAt: Date())
        record.activity = .active
        record.lastSeen = Date()
        record.available = true
        record.sequence = sequence
        return record
    }

    @Test func aReleasedDeviceLeavesNearbyAndTheCountsAndComesBackWithTheStoredRecord() {
        let center = GeoPoint(latitude: 60.17, longitude: 24.94)
        var core = TrackingCore(devices: [Self.record("a", at: center, sequence: 5), Self.record("b", at: center, sequence: 2)])
        let query = NearbyQuery(location: GeoJSONPoint(center), radius: 500)
        #expect(core.nearby(query, now: Date()).count == 2)
        #expect(!core.needsRefresh("a", sharded: true) && !core.needsRefresh("a", sharded: false))
        #expect(core.needsRefresh("never-seen", sharded: true) && !core.needsRefresh("never-seen", sharded: false))

        core.release(["a"])
        #expect(core.nearby(query, now: Date()).map(\.deviceID) == ["b"])
        #expect(core.record("a") == nil && core.deviceCount == 1 && core.activeCount == 1)
        #expect(core.needsRefresh("a", sharded: true))
        #expect(
            core.sweep(now: Date().addingTimeInterval(3600), inactiveAfter: 60).map(\.record.id) == ["b"],
            "no event for a device handed over")

        // Back, with what the other shard stored since: its sequence goes on from there.
        core.refresh("a", stored: Self.record("a", at: center, sequence: 9))
        #expect(core.record("a")?.sequence == 9 && core.deviceCount == 2)
        #expect(!core.needsRefresh("a", sharded: true))
        let change = core.apply(
            deviceID: "a", intents: nil,
            locations: [DeviceLocation(latitude: center.latitude, longitude: center.longitude, recordedAt: Date().addingTimeInterval(1))],
            now: Date())
        #expect(change.events.first?.sequence == 10)
    }

    @Test func anAdoptedDeviceIsInNearbyAtOnceAndReadAgainBeforeItsNextBatch() {
        let center = GeoPoint(latitude: 60.17, longitude: 24.94)
        var core = TrackingCore()
        core.adopt([Self.record("c", at: center, sequence: 3)], stale: true)
        #expect(core.nearby(NearbyQuery(location: GeoJSONPoint(center), radius: 500), now: Date()).map(\.deviceID) == ["c"])
        #expect(core.needsRefresh("c", sharded: true))
        core.refresh("c", stored: nil)  // the store had nothing newer to say
        #expect(!core.needsRefresh("c", sharded: true) && core.record("c")?.sequence == 3)
    }
}
