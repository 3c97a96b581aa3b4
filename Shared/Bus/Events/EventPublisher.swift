import Foundation
import Logging
import Synchronization
import Wire
import ZeroMQ

/// Publishes CloudEvents to the bus's event ingress, stamping a gap-free `sequence` per source.
///
/// `publish` encodes on the caller's task and queues the two frames `[topic][event]`; one thread owns
/// the socket and sends them in sequence order — as one-frame batches of all that is queued when the
/// bus asked for them (`EventBatch`; ride-bus does unless `--no-packing`). The socket sets `ZMQ_XPUB_NODROP`, so when the
/// bus is slow the thread waits (our queue absorbs the burst) instead of libzmq dropping silently;
/// only past `maxQueued` are events dropped, and counted — subscribers then see the gap and catch up.
///
/// The socket is an XPUB rather than a PUB: it behaves the same towards the bus, and it also hears
/// the subscriptions the bus forwards, so `waitForSubscriber(to:)` can tell when an event on a topic
/// would reach someone (ZeroMQ drops events nobody subscribed to at the publisher).
public final class EventPublisher: Sendable {
    public struct Options: Sendable {
        /// Messages libzmq may hold for the bus before the thread waits.
        public var sendHighWaterMark: Int32 = 100_000
        /// Events this publisher may queue before it drops (and counts) new ones.
        public var maxQueued = 1_000_000
        /// How long `close()` keeps sending what is queued.
        public var flushTimeout: Duration = .seconds(1)
        public init() {}
    }

    public enum PublishError: Error, Equatable, CustomStringConvertible {
        case invalidTopic(String)
        case closed
        public var description: String {
            switch self {
            case .invalidTopic(let why): "cannot publish: \(why)"
            case .closed: "cannot publish: the publisher is closed"
            }
        }
    }

    private struct State {
        var nextSequence: UInt64
        var queue: [(topic: Frame, event: Frame)] = []
        var published: UInt64 = 0
        var dropped: UInt64 = 0
        var closed = false
        /// Prefixes the bus says someone subscribes to.
        var subscriptions = SubscribedPrefixes()
        /// Whether the bus asked for batches (`EventBatch`).
        var batches = false
    }

    /// What the publishing tasks and the sending thread share.
    private final class Shared: Sendable {
        let state: Mutex<State>
        let waker = Waker()
        init(nextSequence: UInt64) { state = Mutex(State(nextSequence: nextSequence)) }
    }

    /// The CloudEvents `source` of everything this publisher sends.
    public let source: String
    public let options: Options
    private let shared: Shared
    private var waker: Waker { shared.waker }
    private let thread: OwnedThread
    private let logger: Logger

    /// Connects to `endpoint` (the bus's event ingress, `RIDE_BUS_PUB`; several, separated by commas,
    /// for a bus of several instances: an XPUB sends each event to every one). `nextSequence` continues a
    /// durable sequence after a restart; a publisher without one starts at 1.
    public init(endpoint: String, source: String, nextSequence: UInt64 = 1, options: Options = .init(), logger: Logger) async throws {
        self.source = source
        self.options = options
        self.logger = logger
        let shared = Shared(nextSequence: nextSequence)
        self.shared = shared
        (thread, _) = try await OwnedThread.start(name: "publisher-\(source)") { ready in
            let socket: Socket
            do {
                socket = try Socket(.xpub)
                try socket.setSendHighWaterMark(options.sendHighWaterMark)
                try socket.setNoDrop(true)
                // A bounded wait per send, so a stalled bus cannot keep the thread from noticing close().
                try socket.setSendTimeout(milliseconds: 100)
                try socket.connect(busAddress: endpoint)
                ready(.success(()))
            } catch {
                ready(.failure(error))
                return
            }
            Self.sendLoop(socket: socket, shared: shared, flushTimeout: options.flushTimeout, logger: logger)
            socket.close()
        }
    }

    /// Publishes `data` as a new event of `type` on `topic`; returns the sequence it was given.
    @discardableResult
    public func publish<Payload: Encodable>(topic: String, type: String, data: Payload, time: Date = Date()) throws -> UInt64 {
        try publish(topic: topic, type: type, encodedData: try JSONCoding.encode(data), time: time)
    }

    /// The same for a payload with its own writer (a `@WireModel`), called directly: `JSONCoding`
    /// would find it per event through a cast, which costs a metadata lookup and a boxed value.
    @discardableResult
    public func publish<Payload: Encodable & JSONWritable>(topic: String, type: String, data: Payload, time: Date = Date()) throws -> UInt64
    {
        try publish(topic: topic, type: type, encodedData: data.jsonBytes, time: time)
    }

    private func publish(topic: String, type: String, encodedData: [UInt8], time: Date) throws -> UInt64 {
        if let problem = Topic.problem(with: topic) { throw PublishError.invalidTopic(problem) }
        let id = EventID.next()
        let topicFrame = Frame(frame: topic)
        let sequence = try shared.state.withLock { state -> UInt64 in
            guard !state.closed else { throw PublishError.closed }
            let sequence = state.nextSequence
            state.nextSequence += 1
            let event = EnvelopeWriter.write(id: id, source: source, type: type, time: time, sequence: sequence, data: encodedData)
            enqueue(topicFrame, event, into: &state)
            return sequence
        }
        waker.wake()
        return sequence
    }

    /// Publishes an event that already carries its sequence (an outbox row being sent or re-sent).
    public func publish<Payload: Encodable>(topic: String, event: CloudEvent<Payload>) throws {
        try publish(topic: topic, encodedEvent: event.encoded())
    }

    /// Publishes bytes as they are (tools and benchmarks; services use the typed forms).
    public func publish(topic: String, encodedEvent: [UInt8]) throws {
        try publish(encodedEvents: [(topic, encodedEvent)])
    }

    /// Publishes several events as they are, queued together with one wake of the sending thread
    /// (a commit's events: a wake per event would cost the sender a system call and a thread switch
    /// each). A topic that is not valid throws before any of them is queued.
    public func publish(encodedEvents events: [(topic: String, event: [UInt8])]) throws {
        for (topic, _) in events {
            if let problem = Topic.problem(with: topic) { throw PublishError.invalidTopic(problem) }
        }
        guard !events.isEmpty else { return }
        let framed = events.map { (topic: Frame(frame: $0.topic), event: $0.event) }
        try shared.state.withLock { state in
            guard !state.closed else { throw PublishError.closed }
            for (topic, event) in framed { enqueue(topic, event, into: &state) }
        }
        waker.wake()
    }

    private func enqueue(_ topic: Frame, _ event: Frame, into state: inout State) {
        if state.queue.count >= options.maxQueued {
            state.dropped += 1
        } else {
            state.queue.append((topic, event))
        }
    }

    /// Whether an event on `topic` would reach a subscriber now.
    public func hasSubscriber(to topic: String) -> Bool {
        shared.state.withLock { state in state.subscriptions.covers(Array(topic.utf8)) }
    }

    /// Waits until a subscription covering `topic` reaches this publisher, up to `timeout`;
    /// returns whether one did. Readiness is asked for, not slept for.
    public func waitForSubscriber(to topic: String, timeout: Duration = .seconds(5)) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while !hasSubscriber(to: topic) {
            guard ContinuousClock.now < deadline else { return false }
            try? await Task.sleep(for: .milliseconds(5))
        }
        return true
    }

    /// The sequence the next `publish` will stamp.
    public var nextSequence: UInt64 { shared.state.withLock { $0.nextSequence } }

    /// Sent to libzmq so far, and dropped because the queue was full.
    public var counts: (published: UInt64, dropped: UInt64) { shared.state.withLock { ($0.published, $0.dropped) } }

    /// Sends what is queued (for up to `flushTimeout`), then closes the socket with linger 0.
    public func close() async {
        shared.state.withLock { $0.closed = true }
        waker.wake()
        await thread.join()
    }

    private static func sendLoop(socket: Socket, shared: Shared, flushTimeout: Duration, logger: Logger) {
        let waker = shared.waker
        var poller = Poller()
        poller.add(fileDescriptor: waker.fileDescriptor)
        poller.add(socket)
        var flushDeadline: Int64?
        // Once closing, sending stops at the flush deadline even in the middle of a batch stalled at
        // the high-water mark; whatever is left is counted as dropped.
        func pastDeadline() -> Bool {
            if flushDeadline == nil, shared.state.withLock({ $0.closed }) {
                flushDeadline = MonotonicClock.milliseconds() + flushTimeout.milliseconds
            }
            return flushDeadline.map { MonotonicClock.milliseconds() >= $0 } ?? false
        }
        while true {
            _ = try? poller.poll(timeoutMilliseconds: 100)
            waker.drain()
            while let frames = try? socket.receive(dontWait: true) {
                guard frames.count == 1, let kind = frames[0].first, kind <= 1 else { continue }
                let prefix = frames[0].dropFirst()
                shared.state.withLock { state in
                    if prefix.elementsEqual([EventBatch.prefix]) {
                        state.batches = kind == 1
                    } else if kind == 1 {
                        state.subscriptions.insert(prefix)
                    } else {
                        state.subscriptions.remove(prefix)
                    }
                }
            }
            // The subscriptions are a copy that shares storage until the next one arrives.
            let (queued, batches, subscriptions) = shared.state.withLock { state in
                defer { state.queue.removeAll(keepingCapacity: true) }
                return (state.queue, state.batches, state.subscriptions)
            }
            let messages = batches ? EventBatch.messages(queued, subscriptions: subscriptions) : queued.map { ([$0.topic, $0.event], 1) }
            var sent: UInt64 = 0
            var abandoned: UInt64 = 0
            for (frames, events) in messages {
                if abandoned > 0 || (flushDeadline != nil && pastDeadline()) {
                    abandoned += events
                    continue
                }
                while true {
                    do {
                        if !frames.isEmpty { _ = try socket.send(message: frames) }
                        sent += events
                        break
                    } catch let error as ZMQError where error.isAgain {
                        // Waited SNDTIMEO at the high-water mark: keep waiting unless closing and out of time.
                        if pastDeadline() {
                            abandoned += events
                            break
                        }
                    } catch {
                        logger.error("publish failed", metadata: ["error": "\(error)"])
                        break
                    }
                }
            }
            if sent > 0 || abandoned > 0 {
                shared.state.withLock { state in
                    state.published += sent
                    state.dropped += abandoned
                }
            }
            if abandoned > 0 { logger.warning("closing: events not sent before the flush deadline", metadata: ["dropped": "\(abandoned)"]) }
            let (closed, empty) = shared.state.withLock { ($0.closed, $0.queue.isEmpty) }
            if closed && (empty || pastDeadline()) { return }
        }
    }
}
