import Foundation

/// How tracking's devices are split over its shards: a device belongs to shard
/// `fmix64(fnv1a64(device id's UTF-8)) mod count`. The service (which shard keeps a device) and the
/// SDK (which shard's ingest a device sends to) compute it alike, in every process, so the hash must
/// be stable across processes and builds — Swift's `hashValue` is seeded per process and would not be.
///
/// Why the finalizer: FNV-1a's low bits depend only on the low bits of each byte (its multiplier is
/// odd), so with 4 shards `driver-1`, `driver-5` and `driver-9` would always land together; even the
/// high bits barely feel the last byte. MurmurHash3's 64-bit finalizer mixes every bit into every bit.
public struct DeviceShards: Sendable, Equatable {
    /// The most shards a platform may have (an MDP service name per shard; a Nearby asks them all).
    public static let maximumCount = 64

    public let count: Int

    /// - Precondition: `count` is from 1 to `maximumCount` (parse untrusted text with `DeviceShard.parse`).
    public init(count: Int) {
        precondition((1...Self.maximumCount).contains(count), "a shard count is from 1 to \(Self.maximumCount), got \(count)")
        self.count = count
    }

    /// The shard (0..<count) that keeps `deviceID`.
    public func owner(of deviceID: String) -> Int {
        count == 1 ? 0 : Int(Self.fmix64(Self.fnv1a64(deviceID)) % UInt64(count))
    }

    /// Where `deviceID` goes, in order: its home shard (`owner(of:)`) first, then every other
    /// shard by rendezvous hashing (highest `fmix64(hash ^ salt(shard))` first). The device is
    /// served by the first live shard of its ranking: while its home is down its devices spread
    /// over the others, and a shard that starts takes back its own without moving anyone else's.
    /// The SDK walks the same ranking when a shard does not answer.
    public func ranking(of deviceID: String) -> [Int] {
        let home = owner(of: deviceID)
        guard count > 1 else { return [home] }
        let hash = Self.fnv1a64(deviceID)
        let others = (0..<count).filter { $0 != home }.map { shard in
            (shard: shard, score: Self.fmix64(hash ^ Self.fmix64(UInt64(shard) &+ 0x9e37_79b9_7f4a_7c15)))
        }
        return [home] + others.sorted { ($0.score, $0.shard) > ($1.score, $1.shard) }.map(\.shard)
    }

    /// The shard that serves `deviceID` while the shards in `live` are up: the first of its
    /// ranking that is live (its home when no shard is: a device always names a shard).
    public func owner(of deviceID: String, live: Set<Int>) -> Int {
        let home = owner(of: deviceID)
        if live.contains(home) || live.isEmpty { return home }
        return ranking(of: deviceID).first(where: live.contains) ?? home
    }

    /// MurmurHash3's 64-bit finalizer (its `fmix64`).
    public static func fmix64(_ value: UInt64) -> UInt64 {
        var hash = value
        hash ^= hash >> 33
        hash = hash &* 0xff51_afd7_ed55_8ccd
        hash ^= hash >> 33
        hash = hash &* 0xc4ce_b9fe_1a85_ec53
        hash ^= hash >> 33
        return hash
    }

    /// FNV-1a, 64 bits, over the UTF-8 bytes: simple, fast for short ids, and the same everywhere.
    public static func fnv1a64(_ text: String) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01b3
        }
        return hash
    }
}

/// One shard of tracking: shard `index` of `shards.count`, written `K/N` (`0/1` is unsharded).
public struct DeviceShard: Sendable, Equatable, CustomStringConvertible {
    public let index: Int
    public let shards: DeviceShards

    public static let unsharded = DeviceShard(index: 0, of: DeviceShards(count: 1))

    /// - Precondition: `index` is below `shards.count`.
    public init(index: Int, of shards: DeviceShards) {
        precondition((0..<shards.count).contains(index), "shard \(index) is not one of 0..<\(shards.count)")
        self.index = index
        self.shards = shards
    }

    /// Whether this shard keeps `deviceID`.
    public func owns(_ deviceID: String) -> Bool { shards.owner(of: deviceID) == index }

    public var isSharded: Bool { shards.count > 1 }

    /// `K/N`.
    public var description: String { "\(index)/\(shards.count)" }

    /// Why `K/N` text cannot be a shard.
    public struct ParseError: Error, Equatable, CustomStringConvertible {
        public let description: String
    }

    /// Parses `K/N`: shard K (0 ≤ K < N) of N (1 ≤ N ≤ 64).
    public static func parse(_ text: String) throws(ParseError) -> DeviceShard {
        let parts = text.split(separator: "/", maxSplits: 2, omittingEmptySubsequences: false)
            .map { $0.trimmingCharacters(in: .whitespaces) }
        guard parts.count == 2, let index = Int(parts[0]), let count = Int(parts[1]) else {
            throw ParseError(description: "'\(text)' must be K/N, shard K of N counted from 0 (e.g. 0/2 and 1/2 for two shards)")
        }
        guard (1...DeviceShards.maximumCount).contains(count) else {
            throw ParseError(description: "'\(text)': the shard count N must be from 1 to \(DeviceShards.maximumCount), got \(count)")
        }
        guard (0..<count).contains(index) else {
            throw ParseError(description: "'\(text)': the shard K must be from 0 to \(count - 1) (shards are counted from 0), got \(index)")
        }
        return DeviceShard(index: index, of: DeviceShards(count: count))
    }
}
