import RideModels
import Synchronization

/// Which devices this shard serves now. A device is served by the first live shard of its ranking
/// (`DeviceShards.ranking(of:)`): its home shard while that is up, another while it is down. Every
/// shard starts believing all shards live — with every shard up, each serves its home devices and
/// nothing moves — and `ShardLiveness` marks a shard down once it stops answering.
public final class ShardOwnership: Sendable {
    public let shard: DeviceShard
    private let live: Mutex<Set<Int>>

    public init(shard: DeviceShard) {
        self.shard = shard
        live = Mutex(Set(0..<shard.shards.count))
    }

    /// Unsharded: one shard, which serves every device.
    public static let unsharded = ShardOwnership(shard: .unsharded)

    /// The shards believed up (this one always is).
    public var liveShards: Set<Int> { live.withLock { $0 } }

    /// The shard that serves `deviceID` now.
    public func owner(of deviceID: String) -> Int {
        guard shard.isSharded else { return 0 }
        let live = self.live.withLock { $0 }
        return shard.shards.owner(of: deviceID, live: live)
    }

    /// Whether this shard serves `deviceID` now.
    public func owns(_ deviceID: String) -> Bool { owner(of: deviceID) == shard.index }

    /// Sets the shards believed up (this one is added); whether that changed anything.
    @discardableResult
    public func setLive(_ shards: Set<Int>) -> Bool {
        let updated = shards.union([shard.index])
        return live.withLock { live in
            guard live != updated else { return false }
            live = updated
            return true
        }
    }
}
