import Foundation
import Logging
import Synchronization
import ZeroMQ

/// One event as a subscriber received it.
public struct ReceivedEvent<Payload: Sendable>: Sendable {
    public var topic: String
    public var event: CloudEvent<Payload>
    /// The event's JSON exactly as it arrived (for `ridectl tail --json`).
    public var raw: [UInt8]
    /// What its sequence says about events before it from the same source.
    public var sequence: SequenceObservation
    /// When this subscriber decoded it: the moment an outside observer saw it (a reaction's
    /// latency as the apps feel it, to the microsecond; an event's own `time` has milliseconds).
    public var receivedAt: Date

    public init(topic: String, event: CloudEvent<Payload>, raw: [UInt8], sequence: SequenceObservation, receivedAt: Date = Date()) {
        (self.topic, self.event, self.raw, self.sequence, self.receivedAt) = (topic, event, raw, sequence, receivedAt)
    }
}

/// A message on the bus that is not a valid event: reported, skipped, never fatal.
public struct MalformedMessage: Sendable, Equatable, CustomStringConvertible {
    public var topic: String?
    public var reason: String
    /// A valid event from a source that does not publish its topic (`EventSourceRule`).
    public var isForeignSource = false
    public var description: String { "\(topic.map { "topic \($0): " } ?? "")\(reason)" }
}

public enum Delivery<Payload: Sendable>: Sendable {
    case event(ReceivedEvent<Payload>)
    case malformed(MalformedMessage)
}

/// Receives CloudEvents from the bus's event egress for a set of topic prefixes.
///
/// One thread owns the SUB socket; it decodes each event strictly (`CloudEvent.decode`), checks its
/// source against its topic's publisher (`Options.sourceRule`) and its sequence and id against what
/// came before from the same source (`SequenceTracker`), and hands events to async code in batches
/// (one `AsyncStream` element per poll, up to `batchSize` events). When the consumer falls
/// `maxPendingBatches` behind, the thread stops reading: libzmq's high-water mark then drops at the
/// bus, and the next event's sequence tells the consumer what it missed.
public final class EventSubscriber<Payload: Decodable & Sendable>: Sendable {
    public struct Options: Sendable {
        public var receiveHighWaterMark: Int32 = 100_000
        public var batchSize = 256
        public var maxPendingBatches = 64
        /// Who may publish which topics; an event from another source is refused as malformed.
        /// The platform's processes use the contract's (`Options.platform`, in RideContract).
        public var sourceRule: EventSourceRule?
        public var sequenceLimits = SequenceTracker.Limits()
        /// Where refused events are counted.
        public var refusals = RefusedEvents.shared
        public init() {}
    }

    enum Command: Sendable {
        case subscribe(String)
        case unsubscribe(String)
        case expect(source: String, after: UInt64)
    }

    /// What the consumer and the receiving thread share.
    final class Shared: Sendable {
        let commands = Mailbox<Command>()
        let pending = Atomic<Int>(0)
        let stopRequested = Atomic<Bool>(false)
        /// The bus welcomed this subscriber (`EventForwarder.welcome`).
        let connected = Atomic<Bool>(false)
        let maxPending: Int
        init(maxPending: Int) { self.maxPending = maxPending }

        func consumed() {
            // Wake the thread when the consumer has caught up halfway, so it reads in big strides.
            if pending.subtract(1, ordering: .acquiringAndReleasing).newValue == maxPending / 2 {
                commands.waker.wake()
            }
        }
    }

    /// Batches of deliveries; iterate it from one task. It ends when the subscriber is closed.
    public let deliveries: Deliveries
    private let shared: Shared
    private let thread: OwnedThread
    private let logger: Logger

    /// Connects to `endpoint` (the bus's event egress, `RIDE_BUS_SUB`; several, separated by commas,
    /// for a bus of several instances) and subscribes to `prefixes` ("" = everything).
    public init(endpoint: String, prefixes: [String], options: Options = .init(), logger: Logger) async throws {
        let shared = Shared(maxPending: options.maxPendingBatches)
        self.shared = shared
        self.logger = logger
        let prefixes = prefixes.filter { Self.mayHear($0, logger: logger) }
        let (stream, continuation) = AsyncStream<[Delivery<Payload>]>.makeStream()
        deliveries = Deliveries(stream: stream, shared: shared)
        (thread, _) = try await OwnedThread.start(name: "subscriber") { ready in
            let socket: Socket
            let instances: Int
            do {
                socket = try Socket(.sub)
                try socket.setReceiveHighWaterMark(options.receiveHighWaterMark)
                for prefix in prefixes { try socket.subscribe(prefix) }
                try socket.subscribe(EventForwarder.welcome)  // before connecting, or it never comes
                instances = try socket.connect(busAddress: endpoint)
                ready(.success(()))
            } catch {
                ready(.failure(error))
                continuation.finish()
                return
            }
            Self.receiveLoop(
                socket: socket, shared: shared, options: options, dropsDuplicates: instances > 1, continuation: continuation, logger: logger
            )
            socket.close()
            continuation.finish()
        }
    }

    /// Whether the bus has welcomed this subscriber: connected, its subscriptions sent.
    public var isConnected: Bool { shared.connected.load(ordering: .relaxed) }

    /// Adds `prefix`; one this process's role may not hear is refused here (logged), as the bus would refuse it.
    public func subscribe(_ prefix: String) {
        guard Self.mayHear(prefix, logger: logger) else { return }
        shared.commands.post(.subscribe(prefix))
    }

    static func mayHear(_ prefix: String, logger: Logger) -> Bool {
        guard let refusal = ProcessRole.held?.refusal(toSubscribe: prefix) else { return true }
        logger.error("subscription refused", metadata: ["prefix": "\(prefix)", "reason": "\(refusal.reason)"])
        return false
    }

    public func unsubscribe(_ prefix: String) { shared.commands.post(.unsubscribe(prefix)) }

    /// Tells the gap detector the last sequence already applied from `source` (after a restart), or
    /// sets it back there after a consumer refused what lay beyond; the source is followed from then
    /// on (`SequenceTracker.expect`).
    public func expect(source: String, after sequence: UInt64) { shared.commands.post(.expect(source: source, after: sequence)) }

    /// Stops receiving; `deliveries` ends after what was already handed over.
    public func close() async {
        shared.stopRequested.store(true, ordering: .sequentiallyConsistent)
        shared.commands.waker.wake()
        await thread.join()
    }

    /// `dropsDuplicates`: connected to several instances of the bus, each event comes once through
    /// each; the copies after the first are dropped here (the same id at a sequence seen), not
    /// handed on. A conflict (another id there) is handed on for the consumer to judge.
    private static func receiveLoop(
        socket: Socket, shared: Shared, options: Options, dropsDuplicates: Bool,
        continuation: AsyncStream<[Delivery<Payload>]>.Continuation, logger: Logger
    ) {
        var tracker = SequenceTracker(limits: options.sequenceLimits)
        var reading = Poller()
        reading.add(socket)
        reading.add(fileDescriptor: shared.commands.waker.fileDescriptor)
        var paused = Poller()
        paused.add(fileDescriptor: shared.commands.waker.fileDescriptor)
        var warnings = RateLimitedWarning(logger: logger)
        var batch: [Delivery<Payload>] = []
        batch.reserveCapacity(options.batchSize)
        let reader = CloudEvent<Payload>.oneParseReader

        while !shared.stopRequested.load(ordering: .relaxed) {
            let isPaused = shared.pending.load(ordering: .relaxed) >= shared.maxPending
            do {
                if isPaused {
                    try paused.poll(timeoutMilliseconds: 100)
                } else {
                    try reading.poll(timeoutMilliseconds: 100)
                }
            } catch {
                logger.error("subscriber poll failed", metadata: ["error": "\(error)"])
                return
            }
            for command in shared.commands.take() {
                do {
                    switch command {
                    case .subscribe(let prefix): try socket.subscribe(prefix)
                    case .unsubscribe(let prefix): try socket.unsubscribe(prefix)
                    case .expect(let source, let after): tracker.expect(source: source, after: after)
                    }
                } catch {
                    logger.error("subscription change failed", metadata: ["error": "\(error)"])
                }
            }
            if isPaused { continue }
            do {
                while batch.count < options.batchSize, let frames = try socket.receive(dontWait: true) {
                    if frames.count == 1, frames[0].elementsEqual(EventForwarder.welcome.utf8) {
                        shared.connected.store(true, ordering: .relaxed)
                        continue
                    }
                    let delivery = decode(frames, tracker: &tracker, sourceRule: options.sourceRule, reader: reader)
                    if dropsDuplicates, case .event(let received) = delivery, case .duplicate = received.sequence { continue }
                    if case .malformed(let problem) = delivery {
                        warnings.warn(problem)
                        options.refusals.count(problem.isForeignSource ? .source : .malformed)
                    }
                    batch.append(delivery)
                }
            } catch {
                logger.error("subscriber receive failed", metadata: ["error": "\(error)"])
                if let error = error as? ZMQError, error.isTerminated { return }
            }
            if !batch.isEmpty {
                shared.pending.add(1, ordering: .acquiringAndReleasing)
                continuation.yield(batch)
                batch.removeAll(keepingCapacity: true)
            }
        }
    }

    /// - Parameter reader: the payload's one-pass envelope reader, found once by the caller
    ///   (`CloudEvent.oneParseReader`); without it each event looks for it again.
    static func decode(
        _ frames: [Frame], tracker: inout SequenceTracker, sourceRule: EventSourceRule?,
        reader: (([UInt8]) -> CloudEvent<Payload>?)? = nil
    ) -> Delivery<Payload> {
        guard frames.count == 2 else {
            let topic = frames.first?.utf8String
            return .malformed(MalformedMessage(topic: topic, reason: "expected 2 frames [topic][event], got \(frames.count)"))
        }
        guard let topic = frames[0].utf8String else {
            return .malformed(MalformedMessage(topic: nil, reason: "topic frame is not UTF-8"))
        }
        do {
            let event = try reader?(frames[1]) ?? CloudEvent<Payload>.decode(frames[1])
            // Before the tracker sees it: a foreign source's sequences must not touch the publisher's.
            if let problem = sourceRule?.problem(topic: topic, source: event.source) {
                return .malformed(MalformedMessage(topic: topic, reason: problem, isForeignSource: true))
            }
            let observation = tracker.observe(source: event.source, sequence: event.sequence, id: event.id)
            return .event(ReceivedEvent(topic: topic, event: event, raw: frames[1], sequence: observation))
        } catch {
            return .malformed(MalformedMessage(topic: topic, reason: "invalid event: \(error)"))
        }
    }

    /// The deliveries of one subscriber. Each batch taken lets the receiving thread read further.
    public struct Deliveries: AsyncSequence, Sendable {
        public typealias Element = [Delivery<Payload>]
        let stream: AsyncStream<[Delivery<Payload>]>
        let shared: Shared

        public struct AsyncIterator: AsyncIteratorProtocol {
            var base: AsyncStream<[Delivery<Payload>]>.AsyncIterator
            let shared: Shared

            public mutating func next() async -> [Delivery<Payload>]? {
                let batch = await base.next()
                if batch != nil { shared.consumed() }
                return batch
            }
        }

        public func makeAsyncIterator() -> AsyncIterator {
            AsyncIterator(base: stream.makeAsyncIterator(), shared: shared)
        }
    }
}

/// Logs a flood of bad input as one line per second plus a count, not one line per message.
struct RateLimitedWarning {
    let logger: Logger
    private var windowStart: Int64 = 0
    private var suppressed = 0

    init(logger: Logger) { self.logger = logger }

    mutating func warn(_ problem: MalformedMessage) {
        let now = MonotonicClock.milliseconds()
        if now - windowStart >= 1000 {
            var metadata: Logger.Metadata = ["reason": "\(problem.reason)"]
            if let topic = problem.topic { metadata["topic"] = "\(topic)" }
            if suppressed > 0 { metadata["suppressed"] = "\(suppressed)" }
            logger.warning("skipped malformed event", metadata: metadata)
            windowStart = now
            suppressed = 0
        } else {
            suppressed += 1
        }
    }
}

/// A subscription to the bus, of whatever payload, as readiness sees it.
public protocol BusSubscription: Sendable {
    var isConnected: Bool { get }
}

extension EventSubscriber: BusSubscription {}
