import Logging
import Synchronization
import ZeroMQ

/// The event half of the bus: publishers connect to an XSUB socket (ingress), subscribers to an
/// XPUB socket (egress); events flow one way, subscriptions the other, as in `zmq_proxy`.
///
/// Events are moved frame by frame with `zmq_msg_recv`/`zmq_msg_send` (no copies, no decoding):
/// validating events is each subscriber's job, so the forwarder runs at libzmq's speed. From
/// subscribers only subscription messages (`\x01prefix` / `\x00prefix`) go upstream; anything else
/// is counted and dropped. The egress is lossy for a subscriber that falls behind its high-water
/// mark — one slow `ridectl tail` must never stall the platform; sequences reveal the gap.
public final class EventForwarder: Sendable {
    /// What the egress sends each subscriber as it connects (a one-frame message, no event): a
    /// subscriber that receives it knows it is connected and its subscriptions are on their way.
    /// No topic of the platform starts with `bus.`.
    public static let welcome = "bus.welcome"

    public struct Stats: Sendable, Equatable {
        public var forwarded: UInt64
        public var subscriptions: UInt64
        public var rejected: UInt64
    }

    private let forwarded = Atomic<UInt64>(0)
    private let subscriptions = Atomic<UInt64>(0)
    private let rejected = Atomic<UInt64>(0)
    private let stopRequested = Atomic<Bool>(false)
    private let waker = Waker()
    private let loop = Mutex<OwnedThread?>(nil)
    private let logger: Logger

    public init(logger: Logger) { self.logger = logger }

    /// Binds both sockets and starts forwarding; returns the bound endpoints (wildcard ports resolved).
    /// Throws the first bind error (the message names the endpoint) without starting anything.
    public func start(ingress: String, egress: String, highWaterMark: Int32) async throws -> (ingress: String, egress: String) {
        let bound = try await start(ingress: [ingress], egress: [egress], highWaterMark: highWaterMark)
        return (bound.ingress[0], bound.egress[0])
    }

    /// Binds every endpoint (each socket may listen on several: TCP and `ipc://`) and starts forwarding.
    public func start(ingress: [String], egress: [String], highWaterMark: Int32) async throws -> (ingress: [String], egress: [String]) {
        let (thread, bound) = try await OwnedThread.start(name: "event-forwarder") { [self] ready in
            let xsub: Socket
            let xpub: Socket
            do {
                xsub = try Socket(.xsub)
                xpub = try Socket(.xpub)
                try xsub.setReceiveHighWaterMark(highWaterMark)
                try xpub.setSendHighWaterMark(highWaterMark)
                try xpub.setWelcomeMessage(Self.welcome)
                var boundIngress: [String] = []
                var boundEgress: [String] = []
                for endpoint in ingress {
                    try xsub.bind(endpoint)
                    boundIngress.append(try xsub.lastEndpoint)
                }
                for endpoint in egress {
                    try xpub.bind(endpoint)
                    boundEgress.append(try xpub.lastEndpoint)
                }
                ready(.success((boundIngress, boundEgress)))
            } catch {
                ready(.failure(error))
                return
            }
            forward(xsub: xsub, xpub: xpub)
            xsub.close()
            xpub.close()
        }
        loop.withLock { $0 = thread }
        return bound
    }

    public func stop() {
        stopRequested.store(true, ordering: .sequentiallyConsistent)
        waker.wake()
    }

    public func join() async { await loop.withLock { $0 }?.join() }

    public var stats: Stats {
        Stats(
            forwarded: forwarded.load(ordering: .relaxed), subscriptions: subscriptions.load(ordering: .relaxed),
            rejected: rejected.load(ordering: .relaxed))
    }

    private func forward(xsub: Socket, xpub: Socket) {
        var poller = Poller()
        poller.add(xsub)
        poller.add(xpub)
        poller.add(fileDescriptor: waker.fileDescriptor)
        while !stopRequested.load(ordering: .relaxed) {
            do {
                try poller.poll(timeoutMilliseconds: 250)
                if poller.isReadable(2) { waker.drain() }
                // Events first, in bursts like zmq_proxy's, then any subscription changes.
                var moved: UInt64 = 0
                while moved < 1000, try xsub.forward(to: xpub) > 0 { moved += 1 }
                if moved > 0 { forwarded.add(moved, ordering: .relaxed) }
                while let frames = try xpub.receive(dontWait: true) {
                    if frames.count == 1, let kind = frames[0].first, kind == 0 || kind == 1 {
                        try xsub.send(frames[0])
                        subscriptions.add(1, ordering: .relaxed)
                        logger.debug(kind == 1 ? "subscribe" : "unsubscribe", metadata: ["prefix": "\(String(decoding: frames[0].dropFirst(), as: UTF8.self))"])
                    } else {
                        rejected.add(1, ordering: .relaxed)
                    }
                }
            } catch {
                logger.error("forwarder error", metadata: ["error": "\(error)"])
                if let error = error as? ZMQError, error.isTerminated { return }
            }
        }
    }
}
