import DequeModule
import Foundation
import Logging
import RideModels
import Synchronization
import Wire
import ZeroMQ

/// What a device has done so far (for tests, simulators and the curious).
public struct DeviceStatistics: Sendable, Equatable {
    /// Locations taken from the provider and queued.
    public var sampled: UInt64 = 0
    /// Locations the platform acknowledged (stored): the SDK has forgotten them.
    public var acknowledged: UInt64 = 0
    /// Locations the platform refused (by its rules).
    public var rejected: UInt64 = 0
    /// Locations dropped because more than `maximumUnsent` waited (oldest first).
    public var dropped: UInt64 = 0
    /// Batches sent again after no acknowledgement came in time.
    public var resends: UInt64 = 0
    /// Locations waiting (queued or in the batch in flight).
    public var unsent = 0
    /// Times the device moved to another shard's ingest (its shard did not answer, or named another).
    public var shardSwitches: UInt64 = 0

    public init() {}
}

/// One tracked device: what `HyperTrack`'s static interface drives, and what a simulator makes many
/// of. Its state sits behind a lock; the shared `DeviceRuntime` thread samples its location source,
/// sends batches on its own connection and applies what the platform answers.
///
/// Delivery: one batch in flight at a time; it is sent again (same batch id) when no acknowledgement
/// comes within `acknowledgementTimeout`, backing off to 30 s while the platform is away. A location
/// leaves the SDK only when acknowledged — the platform acknowledges after storing — so a restart
/// of the platform loses nothing the device still has. While it waits, at most `maximumUnsent`
/// locations are kept; the oldest go first, and are counted.
public final class TrackingDevice: Sendable {
    public let id: String
    public let configuration: SDKConfiguration
    let provider: (any LocationProvider)?
    let runtime: DeviceRuntime
    let logger: Logger
    private let state: Mutex<DeviceState>
    private let locationSubscribers: Subscribers<Result<HyperTrack.Location, HyperTrack.LocationError>>
    private let availabilitySubscribers: Subscribers<Bool>
    private let trackingSubscribers: Subscribers<Bool>
    private let errorSubscribers: Subscribers<Set<HyperTrack.HyperTrackError>>
    /// The number of the last snapshot published (`notify`).
    private let published = Mutex<UInt64>(0)

    /// The device behind `HyperTrack`'s static interface, configured from the environment (and
    /// `HYPERTRACK_CONFIG`). A missing publishable key stops the program here, with a message that
    /// says where to put one — the spec's rule for integration mistakes.
    public static let `default`: TrackingDevice = {
        let configuration: SDKConfiguration
        do {
            configuration = try SDKConfiguration.load()
        } catch {
            fatalError("TrackingSDK: \(error)")
        }
        guard configuration.publishableKey != nil else { fatalError(SDKConfiguration.missingKeyMessage) }
        var provider: (any LocationProvider)?
        if let path = configuration.gpxPath {
            do {
                provider = try GPXReplay(file: path)
            } catch {
                fatalError("TrackingSDK: HyperTrackLocationGPX: \(error)")
            }
        }
        do {
            return try TrackingDevice(
                id: configuration.deviceID ?? SDKConfiguration.persistentDeviceID(), configuration: configuration, provider: provider)
        } catch {
            fatalError("TrackingSDK: \(error)")
        }
    }()

    /// A device with its own id and location source, on the shared runtime. Throws when the
    /// configuration has no publishable key or no usable ingest endpoints, or the id cannot be a device id.
    public init(id: String, configuration: SDKConfiguration, provider: (any LocationProvider)?, runtime: DeviceRuntime = .shared) throws {
        guard configuration.publishableKey != nil else { throw SDKConfiguration.Problem(description: SDKConfiguration.missingKeyMessage) }
        guard DeviceIdentity.problem(with: id) == nil else {
            throw SDKConfiguration.Problem(description: "device id '\(id)' must be printable ASCII without spaces, at most 128 bytes")
        }
        let ranking = try configuration.shardRanking(for: id)  // a list of endpoints the device cannot pick from is refused here
        self.id = id
        self.configuration = configuration
        self.provider = provider
        self.runtime = runtime
        var logger = Logger(label: "TrackingSDK")
        logger.logLevel = configuration.loggingEnabled ? .debug : .warning
        logger[metadataKey: "device"] = "\(id)"
        self.logger = logger
        var initial = DeviceState(name: id, credential: configuration.deviceCredential, now: Date())
        initial.shardRanking = ranking
        if provider == nil { initial.blocking.insert(.locationServicesUnavailable) }
        state = Mutex(initial)
        let queue = DispatchQueue(label: "tracking-sdk.callbacks.\(id)")
        locationSubscribers = Subscribers(queue: queue)
        availabilitySubscribers = Subscribers(queue: queue)
        trackingSubscribers = Subscribers(queue: queue)
        errorSubscribers = Subscribers(queue: queue)
        runtime.register(self)
    }

    /// Stops this device: its connection closes; what was not acknowledged is given up.
    public func close() async { await runtime.unregister(self) }

    // MARK: The interface (HyperTrack's, per device)

    public var name: String {
        get { state.withLock { $0.name } }
        set { changeIntents { $0.name = newValue } }
    }

    public var metadata: HyperTrack.JSON.Object {
        get { state.withLock { $0.metadata } }
        set { changeIntents { $0.metadata = newValue } }
    }

    /// The device credential its driver's session gave (`device_credential` in the log-in's reply):
    /// the platform takes this device's locations only with it. Set it after each sign-in.
    public var deviceCredential: String? {
        get { state.withLock { $0.credential } }
        set {
            let snapshot = state.withLock { state in
                state.setCredential(newValue)
                return state.snapshot()
            }
            notify(snapshot)
            runtime.wake()
        }
    }

    public var isAvailable: Bool {
        get { state.withLock { $0.available } }
        set { changeIntents { $0.available = newValue } }
    }

    public var isTracking: Bool { state.withLock { $0.tracking } }

    public var errors: Set<HyperTrack.HyperTrackError> { state.withLock { $0.blocking } }

    public var location: Result<HyperTrack.Location, HyperTrack.LocationError> { state.withLock { $0.locationResult } }

    public var statistics: DeviceStatistics {
        state.withLock { state in
            var stats = state.stats
            stats.unsent = state.pending.count + (state.inFlight?.batch.locations.count ?? 0)
            return stats
        }
    }

    public func startTracking() { changeIntents { $0.setTracking(true, at: Date()) } }

    public func stopTracking() { changeIntents { $0.setTracking(false, at: Date()) } }

    @discardableResult
    public func addGeotag(_ metadata: HyperTrack.JSON.Object) -> Result<HyperTrack.Location, HyperTrack.LocationError> {
        let result = state.withLock { state -> Result<HyperTrack.Location, HyperTrack.LocationError> in
            let result = state.locationResult
            if case .success = result, let fix = state.latest {
                state.pendingGeotags.append(GeotagRecord(metadata: metadata, location: fix))
                state.flushRequested = true
            }
            return result
        }
        runtime.wake()
        return result
    }

    /// Sends the intents now and asks the platform whether the device should track: the platform
    /// decides (it stops tracking when the driver has no ride — the seed's `syncDeviceSettings`).
    public func sync() {
        state.withLock { state in
            state.intentsUnsent = true
            state.syncRequested = true
            state.flushRequested = true
        }
        runtime.wake()
    }

    public func subscribeToLocation(_ callback: @escaping @Sendable (Result<HyperTrack.Location, HyperTrack.LocationError>) -> Void)
        -> HyperTrack.Cancellable
    {
        locationSubscribers.add(current: location, callback)
    }

    public func subscribeToAvailability(_ callback: @escaping @Sendable (Bool) -> Void) -> HyperTrack.Cancellable {
        availabilitySubscribers.add(current: isAvailable, callback)
    }

    public func subscribeToTracking(_ callback: @escaping @Sendable (Bool) -> Void) -> HyperTrack.Cancellable {
        trackingSubscribers.add(current: isTracking, callback)
    }

    public func subscribeToErrors(_ callback: @escaping @Sendable (Set<HyperTrack.HyperTrackError>) -> Void) -> HyperTrack.Cancellable {
        errorSubscribers.add(current: errors, callback)
    }

    private func changeIntents(_ change: (inout DeviceState) -> Void) {
        let snapshot = state.withLock { state in
            change(&state)
            state.intentsChangedAt = Date()
            state.intentsUnsent = true
            state.flushRequested = true
            return state.snapshot()
        }
        notify(snapshot)
        runtime.wake()
    }

    /// Tells subscribers what changed. A snapshot older than one already published is dropped: the
    /// newer one already said where the device stands, and publishing the older after it would
    /// tell a subscriber of a change back (a stop heard, then the tracking from before it again).
    private func notify(_ snapshot: DeviceState.Observable) {
        published.withLock { last in
            guard snapshot.number > last else { return }
            last = snapshot.number
            locationSubscribers.publish(snapshot.location)
            availabilitySubscribers.publish(snapshot.available)
            trackingSubscribers.publish(snapshot.tracking)
            errorSubscribers.publish(snapshot.errors)
        }
    }

    // MARK: The runtime's side (called on the runtime's thread)

    /// Samples the location source and decides what to send now; returns the frames to send, if any.
    func tick(now: Date) -> [Frame]? {
        let (frames, snapshot) = state.withLock { state -> ([Frame]?, DeviceState.Observable) in
            state.sample(now: now, provider: provider, configuration: configuration)
            let frames = state.outbound(now: now, configuration: configuration, deviceID: id)
            return (frames, state.snapshot())
        }
        notify(snapshot)
        return frames
    }

    /// The ingest endpoint the device sends to now: its home shard's, or while that does not answer,
    /// the next of its ranking; the one a `wrong_shard` refusal names.
    var endpoint: String { configuration.endpoints[state.withLock { $0.shard }] }

    /// When `tick` next has something to do.
    func nextDeadline(after now: Date) -> Date {
        state.withLock { $0.nextDeadline(configuration: configuration, hasProvider: provider != nil) }
    }

    /// Applies a message from the platform.
    func receive(_ frames: [Frame], now: Date) {
        guard frames.count == 2, let kind = frames[0].utf8String else {
            logger.warning("unexpected message from the platform", metadata: ["frames": "\(frames.count)"])
            return
        }
        let snapshot = state.withLock { state -> DeviceState.Observable in
            switch kind {
            case IngestFrame.ack:
                if let ack = try? JSONCoding.decode(IngestAck.self, from: frames[1]) { state.acknowledge(ack, now: now, logger: logger) }
            case IngestFrame.error:
                state.refused(frames[1], now: now, logger: logger)
            case IngestFrame.command:
                if let command = try? JSONCoding.decode(DeviceCommandEvent.self, from: frames[1]) {
                    logger.debug("command from the platform", metadata: ["command": "\(command.command.rawValue)"])
                    if !state.obey(command, now: now) {
                        logger.info(
                            "a tracking command older than the device's last tracking change; ignored",
                            metadata: [
                                "command": "\(command.command.rawValue)", "issued_at": "\(command.issuedAt.map(RFC3339.format) ?? "")",
                            ])
                    }
                }
            default:
                logger.warning("unknown message from the platform", metadata: ["kind": "\(kind)"])
            }
            return state.snapshot()
        }
        notify(snapshot)
    }
}

/// A device's state; every change happens under the device's lock.
struct DeviceState {
    struct InFlight {
        var batch: IngestBatch
        var frames: [Frame]
        var sentAt: Date
        var attempts: Int
        /// Its shard answered it (a refusal the batch waits out, `store_unavailable` say): no
        /// reason to look for another shard when the backoff ends.
        var answered = false
        /// Sent again at once to the shard a `wrong_shard` named: not an attempt of the backoff.
        var redirected = false
    }

    struct Observable: Sendable {
        var location: Result<HyperTrack.Location, HyperTrack.LocationError>
        var available: Bool
        var tracking: Bool
        var errors: Set<HyperTrack.HyperTrackError>
        /// Its place in the order the device's state changed (`DeviceState.snapshot()`).
        var number: UInt64
    }

    var name: String
    var metadata: HyperTrack.JSON.Object = [:]
    /// The device credential from the driver's session, sent in every batch.
    private(set) var credential: String?
    private(set) var tracking = false
    /// When tracking was last started or stopped, by the app or by a command (its issue time).
    private(set) var trackingChangedAt = Date.distantPast
    var available = false
    var intentsChangedAt: Date
    var intentsUnsent = true
    var latest: DeviceLocation?
    var blocking: Set<HyperTrack.HyperTrackError> = []
    var pending = Deque<DeviceLocation>()
    var pendingGeotags: [GeotagRecord] = []
    var inFlight: InFlight?
    /// The shards to send to, in order (`SDKConfiguration.shardRanking`), and which of them now.
    var shardRanking = [0]
    var shardPosition = 0
    var shard: Int { shardRanking[shardPosition] }
    var nextBatchID: UInt64 = 1
    var nextSampleAt = Date.distantPast
    var nextFlushAt = Date.distantPast
    var flushRequested = false
    /// A sync asked for: the next batch carries `sync`, and its ack's `platform_tracking` is obeyed.
    var syncRequested = false
    var stats = DeviceStatistics()

    init(name: String, credential: String? = nil, now: Date) {
        self.name = name
        self.credential = credential
        intentsChangedAt = now
    }

    /// A new credential (the driver signed in again): the batch waiting for an answer goes again with it, now.
    mutating func setCredential(_ credential: String?) {
        self.credential = credential
        blocking.remove(.invalidDeviceCredential)
        guard var inFlight else { return }
        inFlight.batch.deviceCredential = credential
        inFlight.frames = [Frame(frame: IngestFrame.batch), (try? JSONCoding.encode(inFlight.batch)) ?? []]
        inFlight.sentAt = .distantPast
        self.inFlight = inFlight
    }

    var collecting: Bool { tracking || available }

    mutating func setTracking(_ on: Bool, at time: Date) {
        tracking = on
        trackingChangedAt = max(trackingChangedAt, time)
    }

    /// Applies a command from the platform; false when it is a tracking command issued before the
    /// device's last tracking change, which it then ignores: the stop of a driver's last ride may
    /// arrive after the start of the next one (commands of different rides are not ordered), and
    /// obeying it would stop tracking mid-ride. A command without an issue time is obeyed.
    mutating func obey(_ command: DeviceCommandEvent, now: Date) -> Bool {
        switch command.command {
        case .startTracking, .stopTracking:
            if let issued = command.issuedAt, issued <= trackingChangedAt { return false }
            setTracking(command.command == .startTracking, at: command.issuedAt ?? now)
            intentsChangedAt = now
        case .sync:
            syncRequested = true
        }
        intentsUnsent = true
        flushRequested = true
        return true
    }

    var locationResult: Result<HyperTrack.Location, HyperTrack.LocationError> {
        guard collecting else { return .failure(.notRunning) }
        guard blocking.isEmpty else { return .failure(.errors(blocking)) }
        guard let latest else { return .failure(.starting) }
        return .success(HyperTrack.Location(latitude: latest.latitude, longitude: latest.longitude))
    }

    /// Snapshots taken, in order (`Observable.number`).
    private var snapshots: UInt64 = 0

    /// What subscribers see now, numbered: taken under the device's lock, it is published after the
    /// lock is released, so two threads may publish theirs out of order (`TrackingDevice.notify`).
    mutating func snapshot() -> Observable {
        snapshots += 1
        return Observable(location: locationResult, available: available, tracking: tracking, errors: blocking, number: snapshots)
    }

    mutating func sample(now: Date, provider: (any LocationProvider)?, configuration: SDKConfiguration) {
        guard collecting, let provider, now >= nextSampleAt else {
            if !collecting { latest = nil }
            return
        }
        nextSampleAt = now.addingTimeInterval(Double(configuration.samplingInterval.milliseconds) / 1000)
        guard let fix = provider.location(at: now) else { return }
        if fix.mocked == true && !configuration.allowMockLocations {
            blocking.insert(.locationMocked)
            return
        }
        blocking.remove(.locationMocked)
        latest = fix
        pending.append(fix)
        stats.sampled += 1
        while pending.count > configuration.maximumUnsent {
            pending.removeFirst()
            stats.dropped += 1
        }
    }

    /// A new batch when one is due, or the batch in flight again when its acknowledgement is late.
    mutating func outbound(now: Date, configuration: SDKConfiguration, deviceID: String) -> [Frame]? {
        if var inFlight {
            guard now >= retryAt(inFlight, configuration: configuration) else { return nil }
            // (`sentAt` is distant past when the batch is sent again at once, not for want of an answer.)
            if shardRanking.count > 1 && inFlight.sentAt != .distantPast && !inFlight.answered {
                // No answer from this shard: it may be down, and the next of the ranking serve the
                // device (a shard that does not answers `wrong_shard`, naming the one that does).
                // The backoff goes on growing: with the whole platform away, the device waits as unsharded.
                shardPosition = (shardPosition + 1) % shardRanking.count
                stats.shardSwitches += 1
            }
            if !inFlight.redirected { inFlight.attempts += 1 }
            (inFlight.answered, inFlight.redirected) = (false, false)
            inFlight.sentAt = now
            self.inFlight = inFlight
            stats.resends += 1
            return inFlight.frames
        }
        guard hasData, flushRequested || now >= nextFlushAt || pending.count >= configuration.maximumBatch else { return nil }
        let locations = Array(pending.prefix(configuration.maximumBatch))
        pending.removeFirst(locations.count)
        let intents =
            intentsUnsent
            ? DeviceIntents(name: name, metadata: metadata, tracking: tracking, available: available, changedAt: intentsChangedAt)
            : nil
        let batch = IngestBatch(
            publishableKey: configuration.publishableKey ?? "", deviceCredential: credential, deviceID: deviceID, batchID: nextBatchID,
            device: intents,
            locations: locations, geotags: pendingGeotags.isEmpty ? nil : pendingGeotags, sync: syncRequested ? true : nil)
        pendingGeotags = []
        syncRequested = false
        intentsUnsent = false
        flushRequested = false
        nextBatchID += 1
        nextFlushAt = now.addingTimeInterval(Double(configuration.batchInterval.milliseconds) / 1000)
        let frames = [Frame(frame: IngestFrame.batch), (try? JSONCoding.encode(batch)) ?? []]
        inFlight = InFlight(batch: batch, frames: frames, sentAt: now, attempts: 1)
        return frames
    }

    /// Something waits to be sent.
    var hasData: Bool { !pending.isEmpty || !pendingGeotags.isEmpty || intentsUnsent || syncRequested }

    /// Backoff: the acknowledgement timeout, doubling with each attempt, at most `maximumRetryDelay`.
    func retryAt(_ inFlight: InFlight, configuration: SDKConfiguration) -> Date {
        let base = Double(configuration.acknowledgementTimeout.milliseconds) / 1000
        let delay = min(Double(configuration.maximumRetryDelay.milliseconds) / 1000, base * pow(2, Double(inFlight.attempts - 1)))
        return inFlight.sentAt.addingTimeInterval(delay)
    }

    func nextDeadline(configuration: SDKConfiguration, hasProvider: Bool) -> Date {
        var deadline = Date.distantFuture
        if collecting && hasProvider { deadline = min(deadline, nextSampleAt) }
        if let inFlight {
            deadline = min(deadline, retryAt(inFlight, configuration: configuration))
        } else if hasData {
            deadline = flushRequested ? .distantPast : min(deadline, nextFlushAt)
        }
        return deadline
    }

    mutating func acknowledge(_ ack: IngestAck, now: Date, logger: Logger) {
        guard let inFlight, inFlight.batch.batchID == ack.batchID else { return }
        self.inFlight = nil
        blocking.remove(.invalidPublishableKey)
        blocking.remove(.invalidDeviceCredential)
        let rejectedLocations = ack.rejected.filter { $0.kind == "location" }.count
        stats.acknowledged += UInt64(inFlight.batch.locations.count - rejectedLocations)
        stats.rejected += UInt64(rejectedLocations)
        for item in ack.rejected {
            logger.warning("the platform refused a \(item.kind)", metadata: ["field": "\(item.field)", "reason": "\(item.reason)"])
        }
        // The platform's intents win when they are newer (set_availability, a command, another app).
        if !intentsUnsent, let changedAt = ack.device.changedAt, changedAt > intentsChangedAt {
            if let tracking = ack.device.tracking { setTracking(tracking, at: changedAt) }
            if let available = ack.device.available { self.available = available }
            if let name = ack.device.name { self.name = name }
            if let metadata = ack.device.metadata { self.metadata = metadata }
            intentsChangedAt = changedAt
        }
        // A sync's answer: the platform decides whether the device tracks; the device tells it back.
        if inFlight.batch.sync == true {
            if let wanted = ack.platformTracking, wanted != tracking {
                logger.info("tracking set by the platform on sync", metadata: ["tracking": "\(wanted)"])
                setTracking(wanted, at: now)
                intentsChangedAt = now
                intentsUnsent = true
                flushRequested = true
            }
        } else if let wanted = ack.platformTracking, let given = ack.platformTrackingAt, given > trackingChangedAt {
            // A tracking command newer than the device's last tracking change that it never heard.
            if wanted == tracking {
                setTracking(wanted, at: given)
            } else {
                logger.info(
                    "a tracking command missed; obeyed from an ack",
                    metadata: ["tracking": "\(wanted)", "issued_at": "\(RFC3339.format(given))"])
                _ = obey(DeviceCommandEvent(command: wanted ? .startTracking : .stopTracking, issuedAt: given), now: now)
            }
        }
        if pending.count >= 1 { nextFlushAt = min(nextFlushAt, now) }
    }

    mutating func refused(_ body: Frame, now: Date, logger: Logger) {
        let refusal = try? JSONCoding.decode(IngestRefusal.self, from: body)
        let error = refusal?.error
        let code = error?.code ?? "unknown"
        let serving = refusal?.shard.flatMap(shardRanking.firstIndex(of:))
        inFlight?.answered = true
        logger.warning("the platform refused a batch", metadata: ["code": "\(code)", "message": "\(error?.message ?? "")"])
        switch code {
        case "wrong_shard" where serving != nil:
            // Another shard serves the device now: the batch goes there at once.
            shardPosition = serving ?? shardPosition
            stats.shardSwitches += 1
            if var inFlight {
                (inFlight.sentAt, inFlight.redirected, inFlight.answered) = (.distantPast, true, false)
                self.inFlight = inFlight
            }
        case "invalid_publishable_key":
            blocking.insert(.invalidPublishableKey)
        // Kept, and sent again on the backoff: the platform's keys may change.
        case "credential_required", "credential_invalid", "credential_revoked":
            blocking.insert(.invalidDeviceCredential)
        // Kept, and sent again on the backoff or at once with a new credential (`deviceCredential`).
        case "store_unavailable", "credential_unchecked", "owner_unavailable", "rate_limited":
            break  // sent again on the backoff
        case "not_approved":
            // The driver may not go online (not approved, or a document expired): the device stays
            // unavailable (the app hears it, and asks the platform why), and what the batch carried
            // goes again without the request.
            guard let inFlight else { return }
            self.inFlight = nil
            pending.insert(contentsOf: inFlight.batch.locations, at: 0)
            pendingGeotags = (inFlight.batch.geotags ?? []) + pendingGeotags
            syncRequested = syncRequested || inFlight.batch.sync == true
            available = false
            intentsChangedAt = now
            intentsUnsent = true
            flushRequested = true
        default:
            // The batch itself is wrong (a bug, or a bad device id): sending it again cannot help.
            if let inFlight { stats.rejected += UInt64(inFlight.batch.locations.count) }
            inFlight = nil
        }
    }
}

/// An ingest error frame: the error, and for `wrong_shard` the shard that serves the device now.
struct IngestRefusal: Decodable {
    var error: ErrorBody.Detail
    var shard: Int?
}
