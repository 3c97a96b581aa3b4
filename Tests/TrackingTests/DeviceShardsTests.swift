import RideModels
import Testing

@Suite struct DeviceShardsTests {
    @Test func theHashIsFNV1a64AndStable() {
        // The published FNV-1a 64 test vectors: any process, any build, any platform gives these.
        #expect(DeviceShards.fnv1a64("") == 0xcbf2_9ce4_8422_2325)
        #expect(DeviceShards.fnv1a64("a") == 0xaf63_dc4c_8601_ec8c)
        #expect(DeviceShards.fnv1a64("foobar") == 0x8594_4171_f739_67e8)
        #expect(DeviceShards.fmix64(DeviceShards.fnv1a64("a")) == 0x82a2_a958_a9be_ce5b)
    }

    @Test func knownDevicesHaveKnownOwners() {
        let two = DeviceShards(count: 2)
        #expect(["driver-1", "driver-2", "driver-3", "s-0", "s-2"].map(two.owner(of:)) == [0, 1, 0, 0, 1])
        let four = DeviceShards(count: 4)
        #expect(["driver-1", "driver-2", "driver-3", "s-0"].map(four.owner(of:)) == [0, 1, 2, 2])
    }

    @Test func idsThatDifferInTheLastCharacterDoNotStickTogether() {
        // Plain FNV-1a mod 4 puts all of these on one shard (the low bits of '1', '5', '9', '=' agree).
        let four = DeviceShards(count: 4)
        #expect(Set(["driver-1", "driver-5", "driver-9", "driver-13"].map(four.owner(of:))).count > 1)
    }

    @Test func oneShardOwnsEverything() {
        let one = DeviceShards(count: 1)
        for id in ["", "a", "driver-1", "ünïcode", String(repeating: "x", count: 128)] {
            #expect(one.owner(of: id) == 0)
            #expect(DeviceShard.unsharded.owns(id))
        }
    }

    @Test func tenThousandIdsSpreadEvenlyOverFourShards() {
        let four = DeviceShards(count: 4)
        var counts = [0, 0, 0, 0]
        for i in 0..<10_000 { counts[four.owner(of: "driver-\(i)")] += 1 }
        #expect(counts.reduce(0, +) == 10_000)
        // 2 500 each; a fair hash stays within a few per cent (±5% is > 5 standard deviations).
        #expect(counts.allSatisfy { (2375...2625).contains($0) }, "\(counts)")
    }

    @Test func parsesKOfN() throws {
        let shard = try DeviceShard.parse("1/2")
        #expect(shard.index == 1 && shard.shards.count == 2 && shard.isSharded)
        #expect(shard.description == "1/2")
        #expect(try DeviceShard.parse("0/1") == .unsharded)
        #expect(try DeviceShard.parse(" 63 / 64 ").index == 63)
        #expect(shard.owns("driver-2") && !shard.owns("driver-1"))
    }

    @Test(arguments: [
        ("", "must be K/N"),
        ("2", "must be K/N"),
        ("a/b", "must be K/N"),
        ("1/2/3", "must be K/N"),
        ("-1/2", "the shard K must be from 0 to 1"),
        ("2/2", "the shard K must be from 0 to 1 (shards are counted from 0), got 2"),
        ("0/0", "the shard count N must be from 1 to 64, got 0"),
        ("0/65", "the shard count N must be from 1 to 64, got 65"),
    ])
    func refusesBadShardsNamingWhatIsWrong(text: String, message: String) {
        #expect {
            try DeviceShard.parse(text)
        } throws: { error in
            "\(error)".contains(message) && "\(error)".contains("'\(text)'")
        }
    }
}
