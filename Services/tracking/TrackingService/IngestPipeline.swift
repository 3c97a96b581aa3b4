import Bus
import Foundation
import Logging
import RideModels
import Synchronization

/// What happens to a batch of locations, whichever way it came (the device socket or the `ingest`
/// op): shard and key checks, rules, the in-memory state, then the store writer, which acknowledges
/// once stored.
public final class IngestPipeline: Sendable {
    public struct Counts: Sendable, Equatable {
        public var batches: UInt64 = 0
        public var refusedBatches: UInt64 = 0
        public var acceptedLocations: UInt64 = 0
        public var rejectedLocations: UInt64 = 0
    }

    public let state: TrackingState
    public let writer: StoreWriter
    public let rules: LocationRules
    /// The devices this process keeps; another shard's batch is refused, nothing stored.
    public let shard: DeviceShard
    private let keys: Set<String>
    /// Checks a `user_id` a batch gives its device (`DeviceOwnership`); nil: believed as it comes.
    private let owners: (any DeviceOwnerLookup)?
    /// Checks the device credential of a batch from the ingest socket; nil: the publishable key is enough.
    private let credentials: DeviceCredentialCheck?
    private let counts = Mutex(Counts())
    private let logger: Logger

    public init(
        state: TrackingState, writer: StoreWriter, rules: LocationRules, shard: DeviceShard = .unsharded, publishableKeys: Set<String>,
        owners: (any DeviceOwnerLookup)? = nil, credentials: DeviceCredentialCheck? = nil, logger: Logger
    ) {
        self.state = state
        self.writer = writer
        self.rules = rules
        self.shard = shard
        self.keys = publishableKeys
        self.owners = owners
        self.credentials = credentials
        self.logger = logger
    }

    public var statistics: Counts { counts.withLock { $0 } }

    /// Counts a message refused before it was a batch (undecodable, unknown frame).
    public func countRefused() { counts.withLock { $0.refusedBatches += 1 } }

    /// Checks and applies `batch` from `deviceID`; `completion` gets the acknowledgement once the
    /// batch is stored, or the refusal (nothing stored, nothing changed). `vouched`: the batch came
    /// through the bus, whose callers are trusted (the gateway has checked the driver's token and
    /// that the device is theirs), so no device credential is asked for.
    public func accept(
        deviceID: String, batch: IngestBatch, now: Date, vouched: Bool = false, completion: @escaping @Sendable (Result<IngestAck, ServiceError>) -> Void
    ) {
        if let problem = DeviceIdentity.problem(with: deviceID) {
            refuse(.unprocessable("invalid_device_id", problem), completion)
            return
        }
        guard keys.contains(batch.publishableKey) else {
            refuse(.unauthorized("invalid_publishable_key", "publishable_key is not one this platform knows (see RIDE_PUBLISHABLE_KEYS)"), completion)
            return
        }
        guard shard.owns(deviceID) else {
            refuse(TrackingOps.wrongShard(deviceID, shard: shard), completion)
            return
        }
        if let problem = rules.problem(withSize: batch) {
            refuse(.unprocessable("batch_too_large", problem), completion)
            return
        }
        if !vouched, let credentials {
            switch credentials.recent(deviceID: deviceID, credential: batch.deviceCredential, now: now) {
            case .success?: break
            case .failure(let error)?: return refuse(error, completion, logged: false)
            case nil:
                // Once a minute per device at most: users is asked, then the batch goes on.
                Task {
                    switch await credentials.check(deviceID: deviceID, credential: batch.deviceCredential, now: now) {
                    case .success: self.checkOwner(deviceID: deviceID, batch: batch, now: now, completion: completion)
                    case .failure(let error): self.refuse(error, completion, logged: false)
                    }
                }
                return
            }
        }
        checkOwner(deviceID: deviceID, batch: batch, now: now, completion: completion)
    }

    /// A new owner named in the metadata is asked about first (rare: once per device and driver).
    private func checkOwner(deviceID: String, batch: IngestBatch, now: Date, completion: @escaping @Sendable (Result<IngestAck, ServiceError>) -> Void) {
        if let owners, let userID = DeviceOwnership.claim(batch.device, current: state.record(deviceID)) {
            Task {
                if let problem = await DeviceOwnership.problem(deviceID: deviceID, userID: userID, owners: owners) {
                    self.refuse(problem, completion)
                } else {
                    self.apply(deviceID: deviceID, batch: batch, now: now, completion: completion)
                }
            }
            return
        }
        apply(deviceID: deviceID, batch: batch, now: now, completion: completion)
    }

    private func apply(deviceID: String, batch: IngestBatch, now: Date, completion: @escaping @Sendable (Result<IngestAck, ServiceError>) -> Void) {
        let checked = rules.check(batch, now: now)
        let change = state.apply(deviceID: deviceID, intents: batch.device, locations: checked.locations, now: now)
        let rejectedLocations = checked.rejected.filter { $0.kind == "location" }.count
        counts.withLock { counts in
            counts.batches += 1
            counts.acceptedLocations += UInt64(checked.locations.count)
            counts.rejectedLocations += UInt64(rejectedLocations)
        }
        if !checked.rejected.isEmpty {
            logger.info(
                "locations refused",
                metadata: [
                    "device": "\(deviceID)", "refused": "\(checked.rejected.count)",
                    "first": "\(checked.rejected[0].field): \(checked.rejected[0].reason)",
                ])
        }
        let ack = IngestAck(
            batchID: batch.batchID, accepted: checked.locations.count + checked.geotags.count,
            rejected: checked.rejected, device: change.record.intents, platformTracking: batch.sync == true ? change.record.platformTracking : nil)
        let write = TrackingWrite(record: change.record, intentsChanged: change.intentsChanged, locations: checked.locations, geotags: checked.geotags)
        writer.submit(
            StoreWriter.Job(writes: [write], events: change.events) { result in
                switch result {
                case .success: completion(.success(ack))
                case .failure(let error):
                    completion(.failure(ServiceError(status: Status.unavailable, code: "store_unavailable", message: "the batch could not be stored (\(error)); send it again")))
                }
            })
    }

    /// `logged: false`: the refusal was logged where it was decided (once per device and minute).
    private func refuse(_ error: ServiceError, _ completion: @Sendable (Result<IngestAck, ServiceError>) -> Void, logged: Bool = true) {
        counts.withLock { $0.refusedBatches += 1 }
        if logged { logger.warning("batch refused", metadata: ["code": "\(error.code)", "message": "\(error.message)"]) }
        completion(.failure(error))
    }
}
