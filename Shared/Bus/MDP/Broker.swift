import Logging
import Synchronization
import ZeroMQ

/// The 7/MDP broker on a ROUTER socket: `BrokerCore`'s bookkeeping, driven by one thread that owns
/// the socket. Clients and workers connect to the same endpoint, as in the zguide's `mdbroker`. The
/// socket may bind several endpoints (TCP for other hosts, `ipc://` for processes on this one).
public final class Broker: Sendable {
    public let configuration: BrokerConfiguration
    private let logger: Logger
    private let stopRequested = Atomic<Bool>(false)
    private let waker = Waker()
    private let snapshot = Mutex(BrokerStats())
    private let loop = Mutex<OwnedThread?>(nil)
    /// Refusals by the policy, logged once per key and action a minute.
    private let refusals = RejectionLog("bus refused a peer's message")

    public init(configuration: BrokerConfiguration = .init(), logger: Logger) {
        self.configuration = configuration
        self.logger = logger
    }

    /// Binds `endpoint` and starts serving; returns the bound endpoint (wildcard ports resolved).
    /// Throws the bind error (e.g. address in use) without starting anything.
    @discardableResult
    public func start(endpoint: String, receiveHighWaterMark: Int32 = 0) async throws -> String {
        try await start(endpoints: [endpoint], receiveHighWaterMark: receiveHighWaterMark)[0]
    }

    /// Binds every endpoint and starts serving; returns the bound endpoints, in order.
    @discardableResult
    public func start(endpoints: [String], receiveHighWaterMark: Int32 = 0) async throws -> [String] {
        let (announces, logger) = (configuration.announcesPackedEnvelope, logger)
        let (thread, bound) = try await OwnedThread.serving(.router, name: "mdp-broker", endpoints: endpoints) { socket in
            try socket.setRouterMandatory(true)
            try socket.setReceiveHighWaterMark(receiveHighWaterMark)
            try socket.setSendHighWaterMark(receiveHighWaterMark)
            try socket.setMaximumMessageSize(BusContract.maximumRequestBytes)
            // Peers pack a message into one frame only towards a broker that says it reads them.
            guard announces else { return }
            do {
                try socket.setMetadata(MDP.envelopeProperty.name, MDP.envelopeProperty.packed)
            } catch {
                logger.notice("peers will send 7/MDP's frames, not one: libzmq takes no ZMTP metadata", metadata: ["error": "\(error)"])
            }
        } _: { [self] socket in
            serve(socket)
        }
        loop.withLock { $0 = thread }
        return bound
    }

    /// Asks the loop to stop; `join()` waits for it.
    public func stop() {
        stopRequested.store(true, ordering: .sequentiallyConsistent)
        waker.wake()
    }

    public func join() async {
        await loop.withLock { $0 }?.join()
    }

    /// The latest counts (refreshed several times a second by the loop).
    public var stats: BrokerStats { snapshot.withLock { $0 } }

    private func serve(_ socket: Socket) {
        var core = BrokerCore(configuration: configuration, now: MonotonicClock.milliseconds())
        var poller = Poller()
        poller.add(socket)
        poller.add(fileDescriptor: waker.fileDescriptor)
        var out: [BrokerOutgoing] = []
        var nextSnapshotAt: Int64 = 0
        var arrivals = WorkerArrivals()
        while !stopRequested.load(ordering: .relaxed) {
            let timeout = max(0, core.nextDeadline - MonotonicClock.milliseconds())
            do {
                try poller.poll(timeoutMilliseconds: Int(min(timeout, 250)))
                if poller.isReadable(1) { waker.drain() }
                // Drain a bounded burst, then look at timers again, so a flood cannot starve heartbeats.
                var burst = 0
                while burst < 4096, let (frames, key) = try receive(socket) {
                    burst += 1
                    let now = MonotonicClock.milliseconds()
                    core.receive(from: frames[0], key: key, frames: frames[1...], now: now, into: &out)
                    flush(&out, core: &core, socket: socket, now: now)
                }
            } catch {
                logger.error("broker socket error", metadata: ["error": "\(error)"])
                if let error = error as? ZMQError, error.isTerminated { break }
            }
            let now = MonotonicClock.milliseconds()
            if now >= core.nextDeadline {
                core.tick(now: now, into: &out)
                flush(&out, core: &core, socket: socket, now: now)
            }
            for notice in core.takeNotices() {
                log(notice)
                if case .workerRegistered(let service, _) = notice { arrivals.arrived(service: service, now: now) }
            }
            for service in arrivals.settled(now: now) {
                let count = core.workerCount(service: service)
                logger.info(
                    "\(service) ready: \(count) worker\(count == 1 ? "" : "s")", metadata: ["service": "\(service)", "workers": "\(count)"])
            }
            if now >= nextSnapshotAt {
                let stats = core.stats
                snapshot.withLock { $0 = stats }
                nextSnapshotAt = now + 50
            }
        }
        snapshot.withLock { $0 = core.stats }
    }

    /// The next message and its sender's key name (asked of libzmq only when a policy needs it).
    private func receive(_ socket: Socket) throws -> (frames: [Frame], key: String?)? {
        if configuration.policy == nil { return try socket.receive(dontWait: true).map { ($0, nil) } }
        return try socket.receiveWithSender(dontWait: true).map { ($0.frames, $0.sender) }
    }

    /// Sends everything in `out`. A worker that vanished (EHOSTUNREACH) is removed at once and its
    /// request given to another worker, which may add more to `out`.
    private func flush(_ out: inout [BrokerOutgoing], core: inout BrokerCore, socket: Socket, now: Int64) {
        var index = 0
        while index < out.count {
            let message = out[index]
            index += 1
            do {
                guard try socket.send(message.to, more: true, dontWait: true) else {
                    // The peer's queue is full (only with a high-water mark set): a worker that cannot
                    // take a request is as good as lost; a client's reply is counted as undeliverable.
                    core.peerUnreachable(message.to, lostMessage: message.frames, now: now, into: &out)
                    continue
                }
                let last = message.frames.count - 1
                for (i, frame) in message.frames.enumerated() {
                    try socket.send(frame, more: i < last)
                }
            } catch let error as ZMQError where error.isHostUnreachable {
                core.peerUnreachable(message.to, lostMessage: message.frames, now: now, into: &out)
            } catch {
                logger.error("broker send failed", metadata: ["error": "\(error)"])
            }
        }
        out.removeAll(keepingCapacity: true)
    }

    private func log(_ notice: BrokerNotice) {
        switch notice {
        case .workerRegistered(let service, let worker):
            logger.debug("worker ready", metadata: ["service": "\(service)", "worker": "\(hex(worker))"])
        case .workerExpired(let service, let worker):
            logger.warning("worker expired (no heartbeat)", metadata: ["service": "\(service)", "worker": "\(hex(worker))"])
        case .workerDisconnected(let service, let worker):
            logger.info("worker disconnected", metadata: ["service": "\(service)", "worker": "\(hex(worker))"])
        case .requestRequeued(let service):
            logger.warning("request requeued after its worker was lost", metadata: ["service": "\(service)"])
        case .protocolError(let peer, let reason):
            logger.warning("rejected message", metadata: ["peer": "\(hex(peer))", "reason": "\(reason)"])
        case .refused(let refusal):
            refusals.note(refusal.reason, from: "\(refusal.key ?? "-") \(refusal.action.kind)", logger: logger)
        }
    }
}

/// A routing id as hex, for logs.
func hex(_ bytes: Frame) -> String {
    bytes.map { byte in
        let digits = String(byte, radix: 16)
        return digits.count == 1 ? "0" + digits : digits
    }.joined()
}
