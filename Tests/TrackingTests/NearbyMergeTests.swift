import Geo
import RideModels
import Testing

@testable import TrackingService

/// Nearby across shards: each shard's answer is nearest first; the merged one too, cut to the limit.
@Suite struct NearbyMergeTests {
    private func device(_ id: String, _ distance: Double) -> NearbyDevice {
        NearbyDevice(
            deviceID: id, name: nil, distance: distance, location: GeoJSONPoint(GeoPoint(latitude: 47.8, longitude: 35.1)),
            available: true, tracking: true, lastSeen: nil, metadata: [:])
    }

    @Test func shardsAnswersAreInterleavedNearestFirst() {
        let shard0 = [device("a", 100), device("c", 300), device("e", 500)]
        let shard1 = [device("b", 200), device("d", 400)]
        let merged = NearbyMerge.merge([shard0, shard1], limit: 10)
        #expect(merged.map(\.deviceID) == ["a", "b", "c", "d", "e"])
        #expect(NearbyMerge.merge([shard1, shard0], limit: 10) == merged, "whichever shard answered first")
    }

    @Test func theLimitCutsTheMergedAnswerNotEachShards() {
        let shard0 = [device("a", 100), device("b", 110), device("c", 120)]
        let shard1 = [device("x", 105), device("y", 115)]
        #expect(NearbyMerge.merge([shard0, shard1], limit: 3).map(\.deviceID) == ["a", "x", "b"])
        #expect(NearbyMerge.merge([shard0, shard1], limit: 1).map(\.deviceID) == ["a"])
    }

    @Test func equalDistancesAreOrderedByDeviceIDAndADeviceCountsOnce() {
        let merged = NearbyMerge.merge([[device("m", 50), device("z", 70)], [device("k", 50), device("m", 60)]], limit: 10)
        #expect(merged.map(\.deviceID) == ["k", "m", "z"])
        #expect(merged[1].distance == 50, "the nearer report of a device counts")
    }

    @Test func missingOrEmptyShardsLeaveTheOthers() {
        #expect(NearbyMerge.merge([], limit: 5).isEmpty)
        #expect(NearbyMerge.merge([[], [device("a", 1)], []], limit: 5).map(\.deviceID) == ["a"])
    }
}
