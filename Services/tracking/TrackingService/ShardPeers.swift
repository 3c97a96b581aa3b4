import Bus
import Logging
import RideContract
import RideModels
import Synchronization

/// How a sharded tracking process reaches the other shards: through the broker, to their peer
/// services `tracking.shard.J`, with short deadlines — a shard that is down (restarting) must cost a
/// caller a bounded wait, never a hang.
public final class ShardPeers: Sendable {
    public struct Stats: Sendable, Equatable {
        /// Device ops passed on to the shard that keeps the device.
        public var forwarded: UInt64 = 0
        /// Of those, the ones whose shard did not answer (answered 503 `shard_unavailable`).
        public var unansweredForwards: UInt64 = 0
        /// Shards left out of a Nearby answer because they did not answer in time (or failed).
        public var missingNearbyShards: UInt64 = 0
    }

    /// How long a forwarded device op waits for its shard.
    public static let forwardTimeout: Duration = .seconds(2)
    /// How long Nearby waits for the other shards (dispatch is waiting for it).
    public static let nearbyTimeout: Duration = .seconds(1)

    public let ownership: ShardOwnership
    public var shard: DeviceShard { ownership.shard }
    private let client: ServiceClient
    private let stats = Mutex(Stats())

    /// - Parameter client: a client whose requests are tried once (a retry would only add to the
    ///   caller's wait past the deadline).
    public init(ownership: ShardOwnership, client: ServiceClient) {
        self.ownership = ownership
        self.client = client
    }

    public var statistics: Stats { stats.withLock { $0 } }

    public func close() async { await client.close() }

    /// Passes `op` with its params, unchanged, to shard `owner`; its reply as it is, or 503
    /// `shard_unavailable` when it does not answer within `forwardTimeout`.
    func forward(_ op: String, json: [UInt8], deviceID: String, to owner: Int) async throws -> ServiceReply {
        stats.withLock { $0.forwarded += 1 }
        do {
            return try await client.callRaw(
                BusContract.Service.trackingShard(owner), op, json: json, timeout: Self.forwardTimeout, attempts: 1)
        } catch let error as MDPClientError {
            stats.withLock { $0.unansweredForwards += 1 }
            let service = BusContract.Service.trackingShard(owner)
            throw ServiceError(
                status: Status.unavailable, code: "shard_unavailable",
                message: """
                    tracking shard \(owner)/\(shard.shards.count) (service \(service)), which keeps device '\(deviceID)', \
                    did not answer \(op) within \(Self.forwardTimeout.seconds) s (\(error)); try again shortly
                    """)
        }
    }

    /// Whether shard `index` answers a `ping` within `timeout`.
    func answers(_ index: Int, timeout: Duration) async -> Bool {
        (try? await client.callRaw(BusContract.Service.trackingShard(index), "ping", json: Array("{}".utf8), timeout: timeout, attempts: 1))
            != nil
    }

    /// Every other live shard's Nearby answer, asked at once (a shard down serves no device); a
    /// shard that does not answer within `nearbyTimeout` (or fails) is left out, logged and counted.
    func nearby(_ query: NearbyQuery, logger: Logger) async -> [[NearbyDevice]] {
        let others = ownership.liveShards.subtracting([shard.index]).sorted()
        return await withTaskGroup(of: [NearbyDevice]?.self) { group in
            for index in others {
                group.addTask { [client] in
                    let service = BusContract.Service.trackingShard(index)
                    do {
                        return try await client.call(Ops.Tracking.nearby, on: service, query, timeout: Self.nearbyTimeout).devices
                    } catch {
                        self.stats.withLock { $0.missingNearbyShards += 1 }
                        logger.warning(
                            "nearby: a shard did not answer; its devices are left out",
                            metadata: [
                                "shard": "\(index)/\(self.shard.shards.count)", "service": "\(service)", "error": "\(error)",
                            ])
                        return nil
                    }
                }
            }
            var answers: [[NearbyDevice]] = []
            for await answer in group { if let answer { answers.append(answer) } }
            return answers
        }
    }
}

extension Duration {
    /// Whole seconds, for messages.
    fileprivate var seconds: Int64 { components.seconds }
}
