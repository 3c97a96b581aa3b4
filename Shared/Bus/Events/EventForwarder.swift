import Foundation
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
///
/// With a `BusPolicy` (a secured bus), an event is forwarded only when its topic is one its
/// publisher's role may publish, and a subscription takes effect only when the subscriber's role
/// may hear it: the egress applies subscriptions by hand (`ZMQ_XPUB_MANUAL`), one subscriber at a
/// time, and `SubscriptionLedger` keeps the refused ones from ever cancelling an allowed one upstream.
///
/// With `batches`, the forwarder asks its publishers for `EventBatch`es (a subscription no
/// subscriber may make) and splits each into `[topic][event]` messages, checking each topic as it
/// would a message of its own; a batch that is not well formed is dropped whole and counted.
public final class EventForwarder: Sendable {
    /// What the egress sends each subscriber as it connects (a one-frame message, no event): a
    /// subscriber that receives it knows it is connected and its subscriptions are on their way.
    /// No topic of the platform starts with `bus.`.
    public static let welcome = "bus.welcome"

    public struct Stats: Sendable, Equatable {
        public var forwarded: UInt64
        public var subscriptions: UInt64
        public var rejected: UInt64
        /// Event batches split (their events are counted in `forwarded`), and dropped as malformed.
        public var batches: UInt64 = 0
        public var malformedBatches: UInt64 = 0
        /// Events and subscriptions the policy refused, per action (`publish`, `subscribe`) and role.
        public var refused: [RefusalCount: UInt64] = [:]
    }

    private let forwarded = Atomic<UInt64>(0)
    private let subscriptions = Atomic<UInt64>(0)
    private let rejected = Atomic<UInt64>(0)
    private let batchesSplit = Atomic<UInt64>(0)
    private let malformedBatches = Atomic<UInt64>(0)
    private let refused = Mutex<[RefusalCount: UInt64]>([:])
    private let refusals = RejectionLog("bus refused a peer's message")
    private let policy: BusPolicy?
    private let batches: Bool
    private let stopRequested = Atomic<Bool>(false)
    private let waker = Waker()
    private let loop = Mutex<OwnedThread?>(nil)
    private let logger: Logger

    /// `policy`: who may publish and hear what (nil: everyone everything, a bus without CURVE);
    /// `batches`: whether publishers are asked for `EventBatch`es.
    public init(policy: BusPolicy? = nil, batches: Bool = true, logger: Logger) {
        self.policy = policy
        self.batches = batches
        self.logger = logger
    }

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
                try xpub.setManualSubscriptions(true)
                try xsub.setMaximumMessageSize(BusContract.maximumEventBytes)
                try xpub.setMaximumMessageSize(4096)  // subscribers send nothing but subscriptions (a topic is at most 255 bytes)
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
                if batches { try xsub.send(EventBatch.subscription) }
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
            rejected: rejected.load(ordering: .relaxed), batches: batchesSplit.load(ordering: .relaxed),
            malformedBatches: malformedBatches.load(ordering: .relaxed), refused: refused.withLock { $0 })
    }

    private func forward(xsub: Socket, xpub: Socket) {
        var poller = Poller()
        poller.add(xsub)
        poller.add(xpub)
        poller.add(fileDescriptor: waker.fileDescriptor)
        var ledger = SubscriptionLedger()
        var gate = policy.map(PublishGate.init)
        while !stopRequested.load(ordering: .relaxed) {
            do {
                try poller.poll(timeoutMilliseconds: 250)
                if poller.isReadable(2) { waker.drain() }
                // Events first, in bursts like zmq_proxy's, then any subscription changes.
                var moved: UInt64 = 0
                if gate == nil && !batches {
                    while moved < 1000, try xsub.forward(to: xpub) > 0 { moved += 1 }
                } else {
                    var read = 0
                    while read < 1000,
                        let result = try xsub.forward(
                            to: xpub, admit: { gate?.admits(topic: $0, sender: $1) ?? true },
                            divert: { frame, sender in try split(frame, sender: sender, to: xpub, gate: &gate, moved: &moved) })
                    {
                        read += 1
                        if result.refused, let refusal = gate?.lastRefusal { count(refusal) } else if result.frames > 0 { moved += 1 }
                    }
                }
                if moved > 0 { forwarded.add(moved, ordering: .relaxed) }
                while let (frames, sender) = try xpub.receiveWithSender(dontWait: true) {
                    if frames.count == 1, let kind = frames[0].first, kind == 0 || kind == 1 {
                        try subscriptionChanged(frames[0], sender: sender, xsub: xsub, xpub: xpub, ledger: &ledger)
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

    /// A one-frame message from a publisher: a batch is split into its events (true), anything
    /// else is left to be forwarded as it came (false).
    private func split(
        _ frame: UnsafeRawBufferPointer, sender: UnsafePointer<CChar>?, to xpub: Socket, gate: inout PublishGate?, moved: inout UInt64
    ) throws -> Bool {
        guard batches, EventBatch.isBatch(frame) else { return false }
        guard let events = EventBatch.split(frame) else {
            malformedBatches.add(1, ordering: .relaxed)
            refusals.note("malformed event batch", from: sender.map { String(cString: $0) } ?? "-", logger: logger)
            return true
        }
        batchesSplit.add(1, ordering: .relaxed)
        for (topic, event) in events {
            let topic = UnsafeRawBufferPointer(rebasing: frame[topic])
            if gate?.admits(topic: topic, sender: sender) == false {
                if let refusal = gate?.lastRefusal { count(refusal) }
                continue
            }
            try xpub.send(topic, more: true)
            try xpub.send(UnsafeRawBufferPointer(rebasing: frame[event]))
            moved += 1
        }
        return true
    }

    /// A subscription (`\u{1}prefix`) or its end (`\u{0}prefix`) from `sender`: applied to that
    /// subscriber and passed upstream when the policy allows it. A prefix that starts as a batch
    /// does is no subscriber's to make: it would ask publishers for batches.
    private func subscriptionChanged(_ message: Frame, sender: String?, xsub: Socket, xpub: Socket, ledger: inout SubscriptionLedger) throws
    {
        guard message.dropFirst().first != EventBatch.prefix else {
            rejected.add(1, ordering: .relaxed)
            return
        }
        let prefixBytes = Array(message.dropFirst())
        let prefix = String(decoding: prefixBytes, as: UTF8.self)
        let refusal = policy?.refusal(of: .subscribe(prefix: prefix), by: sender)
        if message[0] == 1 {
            if let refusal {
                _ = ledger.subscribed(prefixBytes, allowed: false)
                count(refusal)
                return
            }
            try xpub.applySubscription(message)
            if ledger.subscribed(prefixBytes, allowed: true) { try xsub.send(message) }
        } else {
            try xpub.applySubscription(message)
            // A subscriber's own unsubscription has its sender; one libzmq makes for a subscriber that left has none.
            let wasAllowed: Bool? = sender == nil && policy != nil ? nil : refusal == nil
            if ledger.unsubscribed(prefixBytes, wasAllowed: wasAllowed) { try xsub.send(message) }
        }
        subscriptions.add(1, ordering: .relaxed)
        logger.debug(message[0] == 1 ? "subscribe" : "unsubscribe", metadata: ["prefix": "\(prefix)"])
    }

    private func count(_ refusal: BusRefusal) {
        refused.withLock { $0[RefusalCount(refusal), default: 0] += 1 }
        refusals.note(refusal.reason, from: "\(refusal.key ?? "-") \(refusal.action.kind)", logger: logger)
    }
}

/// The forwarder's check of each event's publisher: the policy's answer for the last key seen is
/// kept, so a run of events from one publisher costs a string comparison each, not a lookup.
struct PublishGate {
    let policy: BusPolicy
    private var lastSender: [CChar] = []
    private var lastPermissions: BusPermissions?
    /// Why the last refused event was refused.
    private(set) var lastRefusal: BusRefusal?

    init(policy: BusPolicy) { self.policy = policy }

    mutating func admits(topic: UnsafeRawBufferPointer, sender: UnsafePointer<CChar>?) -> Bool {
        guard let sender else {
            lastRefusal = policy.refusal(of: .publish(topic: Self.text(topic)), by: nil)
            return false
        }
        if lastSender.isEmpty || strcmp(lastSender, sender) != 0 {
            let name = String(cString: sender)
            lastSender = Array(name.utf8CString)
            lastPermissions = policy.permissions(ofKey: name)
        }
        if let permissions = lastPermissions, permissions.mayPublish(topic: topic) { return true }
        let name = String(cString: sender)
        lastRefusal = policy.refusal(of: .publish(topic: Self.text(topic)), by: name)
        return lastRefusal == nil
    }

    static func text(_ topic: UnsafeRawBufferPointer) -> String {
        String(decoding: topic.prefix(Topic.maximumLength), as: UTF8.self)
    }
}
