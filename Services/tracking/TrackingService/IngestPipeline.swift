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
    /// The devices this process serves now; another shard's batch is refused, nothing stored.
    public let ownership: ShardOwnership
    /// Where a device another shard served is read from before its batch is applied (`refresh`).
    private let store: (any TrackingStore)?
    /// Device reads running now, bounded as the owner checks are.
    private let refreshes = TaskBudget(limit: IngestPipeline.maximumOwnerChecks)
    private let keys: Set<String>
    /// Checks a `user_id` a batch gives its device (`DeviceOwnership`); nil: believed as it comes.
    private let owners: (any DeviceOwnerLookup)?
    /// Checks the device credential of a batch from the ingest socket, batched; nil: the publishable key is enough.
    private let credentials: DeviceCredentialQueue?
    /// Owner lookups running now: bounded, so a stream of claims cannot make unbounded tasks. Only
    /// a device whose credential held, or a trusted caller of the `ingest` op, gets this far, so the
    /// bound is about memory, not trust: a fleet signing in at once (`ridectl bench city` registers
    /// its drivers together) must not be turned away.
    private let ownerChecks = TaskBudget(limit: IngestPipeline.maximumOwnerChecks)
    static let maximumOwnerChecks = 256
    private let counts = Mutex(Counts())
    private let refusals = RejectionLog("batch refused")
    private let logger: Logger

    public init(
        state: TrackingState, writer: StoreWriter, rules: LocationRules, ownership: ShardOwnership = .unsharded,
        store: (any TrackingStore)? = nil,
        publishableKeys: Set<String>, owners: (any DeviceOwnerLookup)? = nil, credentials: DeviceCredentialQueue? = nil, logger: Logger
    ) {
        self.state = state
        self.writer = writer
        self.rules = rules
        self.ownership = ownership
        self.store = store
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
    /// through the bus without a credential, from a caller trusted with the op (the gateway has
    /// checked the driver's token and that the device is theirs), so no device credential is asked for.
    public func accept(
        deviceID: String, batch: IngestBatch, now: Date, vouched: Bool = false,
        completion: @escaping @Sendable (Result<IngestAck, ServiceError>) -> Void
    ) {
        if let problem = DeviceIdentity.problem(with: deviceID) {
            refuse(
                .unprocessable("invalid_device_id", problem), completion, loggedAs: String(deviceID.prefix(DeviceIdentity.maximumLength)))
            return
        }
        guard keys.contains(batch.publishableKey) else {
            refuse(
                .unauthorized("invalid_publishable_key", "publishable_key is not one this platform knows (see RIDE_PUBLISHABLE_KEYS)"),
                completion, loggedAs: deviceID)
            return
        }
        guard ownership.owns(deviceID) else {
            refuse(TrackingOps.wrongShard(deviceID, ownership: ownership), completion, loggedAs: deviceID)
            return
        }
        if let problem = rules.problem(withSize: batch) {
            refuse(.unprocessable("batch_too_large", problem), completion, loggedAs: deviceID)
            return
        }
        guard !vouched, let credentials else {
            checkOwner(deviceID: deviceID, batch: batch, driver: nil, now: now, completion: completion)
            return
        }
        let goesOnline = batch.device?.available == true
        switch credentials.check.recent(deviceID: deviceID, credential: batch.deviceCredential, now: now) {
        case .success(let holder)? where holder.approvalProblem == nil || !goesOnline:
            checkOwner(deviceID: deviceID, batch: batch, driver: holder.driver, now: now, completion: completion)
        case .failure(let error)?: refuse(error, completion)
        case .success?, nil:
            // No recent verdict, or one saying the driver may not go online for a batch that asks
            // to (an operator may have approved them since): the batch waits for the next batched
            // question to users (or is refused at once when too many wait). `recent` answered a
            // batch without a credential.
            let pair = CredentialPair(deviceID: deviceID, credential: batch.deviceCredential ?? "")
            credentials.submit(pair) { outcome in
                switch outcome {
                case .success(let holder):
                    if goesOnline, let problem = holder.approvalProblem {
                        // As the gateway's availability route: users, the approval's owner, says.
                        self.refuse(.forbidden("not_approved", "not approved for shifts: \(problem)"), completion, loggedAs: deviceID)
                    } else {
                        self.checkOwner(deviceID: deviceID, batch: batch, driver: holder.driver, now: now, completion: completion)
                    }
                case .failure(let error): self.refuse(error, completion)
                }
            }
        }
    }

    /// A new owner named in the metadata is checked first (rare: once per device and driver). The
    /// driver whose credential the batch carries needs no question: users checked that their
    /// account names this device. Any other is asked about, a bounded number at a time.
    private func checkOwner(
        deviceID: String, batch: IngestBatch, driver: String?, now: Date,
        completion: @escaping @Sendable (Result<IngestAck, ServiceError>) -> Void
    ) {
        guard let owners, let userID = DeviceOwnership.claim(batch.device, current: state.record(deviceID)), userID != driver else {
            apply(deviceID: deviceID, batch: batch, now: now, completion: completion)
            return
        }
        let busy = ServiceError.busy(
            "owner_unavailable", "who owns device \(deviceID) cannot be checked now (too many checks at once: busy)")
        inTask(within: ownerChecks, orRefuse: busy, completion) {
            if let problem = await DeviceOwnership.problem(deviceID: deviceID, userID: userID, owners: owners) {
                self.refuse(problem, completion, loggedAs: deviceID)
            } else {
                self.apply(deviceID: deviceID, batch: batch, now: now, completion: completion)
            }
        }
    }

    /// A device another shard may have served since its record here was read is read again first,
    /// so that its history and its events' sequence go on from where that shard left them.
    private func apply(
        deviceID: String, batch: IngestBatch, now: Date, completion: @escaping @Sendable (Result<IngestAck, ServiceError>) -> Void
    ) {
        guard needsRefresh(deviceID) else {
            applyNow(deviceID: deviceID, batch: batch, now: now, completion: completion)
            return
        }
        let busy = ServiceError.busy(
            "store_unavailable", "device \(deviceID) cannot be read from the store now (too many reads at once: busy)")
        inTask(within: refreshes, orRefuse: busy, completion) {
            do throws(ServiceError) {
                try await self.refreshIfNeeded(deviceID)
                self.applyNow(deviceID: deviceID, batch: batch, now: now, completion: completion)
            } catch {
                self.refuse(error, completion, loggedAs: deviceID)
            }
        }
    }

    /// Runs `work` in a task when `budget` has room; else refuses the batch with `busy`.
    private func inTask(
        within budget: TaskBudget, orRefuse busy: ServiceError, _ completion: @escaping @Sendable (Result<IngestAck, ServiceError>) -> Void,
        _ work: @escaping @Sendable () async -> Void
    ) {
        guard budget.start() else {
            refuse(busy, completion)
            return
        }
        Task {
            await work()
            budget.end()
        }
    }

    private func needsRefresh(_ deviceID: String) -> Bool {
        store != nil && state.needsRefresh(deviceID, sharded: ownership.shard.isSharded)
    }

    /// Reads `deviceID` from the store when another shard may have served it since this process
    /// read it (a handover); the device ops call it too, so they answer what that shard stored.
    public func refreshIfNeeded(_ deviceID: String) async throws(ServiceError) {
        guard let store, needsRefresh(deviceID) else { return }
        do {
            state.refresh(deviceID, stored: try await store.loadDevices(ids: [deviceID]).first, owns: ownership.owns)
        } catch {
            throw ServiceError(
                status: Status.unavailable, code: "store_unavailable",
                message: "device \(deviceID) could not be read from the store (\(error)); try again")
        }
    }

    private func applyNow(
        deviceID: String, batch: IngestBatch, now: Date, completion: @escaping @Sendable (Result<IngestAck, ServiceError>) -> Void
    ) {
        let checked = rules.check(batch, now: now)
        guard
            let change = state.apply(
                deviceID: deviceID, intents: batch.device, locations: checked.locations, now: now, owns: ownership.owns)
        else {
            refuse(TrackingOps.wrongShard(deviceID, ownership: ownership), completion, loggedAs: deviceID)
            return
        }
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
        // The platform's word on tracking: asked by a sync; on every ack once there is one, so that
        // a device that missed the command hears it with its next batch.
        let word = change.record.platformTrackingAt
        let ack = IngestAck(
            batchID: batch.batchID, accepted: checked.locations.count + checked.geotags.count, rejected: checked.rejected,
            device: change.record.intents, platformTracking: batch.sync == true || word != nil ? change.record.platformTracking : nil,
            platformTrackingAt: word)
        let write = TrackingWrite(
            record: change.record, intentsChanged: change.intentsChanged, locations: checked.locations, geotags: checked.geotags)
        writer.submit(
            StoreWriter.Job(writes: [write], events: change.events) { result in
                switch result {
                case .success: completion(.success(ack))
                case .failure(let error):
                    completion(
                        .failure(
                            ServiceError(
                                status: Status.unavailable, code: "store_unavailable",
                                message: "the batch could not be stored (\(error)); send it again")))
                }
            })
    }

    /// `loggedAs`: the device to log the refusal under, once per device and minute (nil: it was
    /// logged where it was decided, or by the ingest socket).
    private func refuse(
        _ error: ServiceError, _ completion: @Sendable (Result<IngestAck, ServiceError>) -> Void, loggedAs deviceID: String? = nil
    ) {
        counts.withLock { $0.refusedBatches += 1 }
        if let deviceID { refusals.note("\(error.code): \(error.message)", from: deviceID, logger: logger) }
        completion(.failure(error))
    }
}

/// At most `limit` tasks of one kind at a time: what the pipeline starts per batch is bounded.
final class TaskBudget: Sendable {
    private let running = Mutex(0)
    let limit: Int

    init(limit: Int) { self.limit = limit }

    /// Whether one more may start (then `end` must follow).
    func start() -> Bool {
        running.withLock { running in
            guard running < limit else { return false }
            running += 1
            return true
        }
    }

    func end() { running.withLock { $0 -= 1 } }
}

extension ServiceError {
    /// 503: the batch was not looked at for want of room; the SDK sends it again on its backoff.
    static func busy(_ code: String, _ what: String) -> ServiceError {
        ServiceError(status: Status.unavailable, code: code, message: "\(what); send the batch again")
    }
}
