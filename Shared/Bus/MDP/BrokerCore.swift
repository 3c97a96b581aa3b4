import DequeModule
import ZeroMQ

/// The broker's tunables. Defaults are the zguide's: heartbeat every 2.5 s, a peer is dead after 3 silent intervals.
public struct BrokerConfiguration: Sendable {
    /// Milliseconds between HEARTBEATs to each worker.
    public var heartbeatInterval: Int64 = 2500
    /// Intervals of silence after which a worker is dead.
    public var heartbeatLiveness: Int64 = 3
    /// A request waiting this long (ms) for a worker is answered `503 no_worker` (its client has
    /// given up by then: 3 tries × 2.5 s).
    public var requestTimeToLive: Int64 = 10_000
    /// Requests a service may have waiting before new ones are answered `503 queue_full`.
    public var maxQueuedPerService = 100_000
    /// How often a request whose worker died is given to another worker before `503 worker_lost`.
    public var maxRequeues = 1
    /// Who may serve and call what (a secured bus); nil: every peer may do everything.
    public var policy: BusPolicy?
    /// Whether the broker's socket tells its peers it reads and writes messages packed into one
    /// frame (`MDP.Envelope`); without it they send 7/MDP's frames. It reads both either way.
    public var announcesPackedEnvelope = true

    public init() {}
}

/// A message the broker wants sent: `frames` go to the peer whose routing id is `to`.
public struct BrokerOutgoing: Equatable, Sendable {
    public var to: Frame
    public var frames: [Frame]
}

/// Something worth a log line.
public enum BrokerNotice: Equatable, Sendable {
    case workerRegistered(service: String, worker: Frame)
    case workerExpired(service: String, worker: Frame)
    case workerDisconnected(service: String, worker: Frame)
    case requestRequeued(service: String)
    case protocolError(peer: Frame, reason: String)
    /// The policy refused a READY (the worker is told to disconnect) or a request (answered 403).
    case refused(BusRefusal)
}

/// Counts and per-service state, for `/health`, `/metrics` and `ridectl status`.
public struct BrokerStats: Sendable, Equatable {
    public struct Service: Sendable, Equatable, Codable {
        public var workers = 0
        public var idle = 0
        public var queued = 0
        public var requests: UInt64 = 0
    }
    public var services: [String: Service] = [:]
    public var requests: UInt64 = 0
    /// Client requests and worker replies that came packed into one frame (`MDP.Envelope`).
    public var packed: UInt64 = 0
    public var replies: UInt64 = 0
    public var malformed: UInt64 = 0
    public var expiredWorkers: UInt64 = 0
    public var requeued: UInt64 = 0
    public var rejected: UInt64 = 0
    public var undeliverable: UInt64 = 0
    /// Refusals by the policy, per action kind (`serve`, `call`) and role.
    public var refused: [RefusalCount: UInt64] = [:]
}

/// What a refusal is counted under (`ride_bus_refused_total{action, role}`).
public struct RefusalCount: Sendable, Hashable {
    public var action: String
    public var role: String
    public init(_ refusal: BusRefusal) { (action, role) = (refusal.action.kind, refusal.role) }
}

/// The Majordomo broker's bookkeeping, with no sockets in it: messages in, messages out, time as a
/// parameter. `Broker` connects it to a ROUTER socket; tests drive it directly.
///
/// Beyond the zguide's broker: heartbeats go to every worker (the RFC says both peers send them at
/// regular intervals, busy or not); a request whose worker dies is given to another worker
/// (requeued) instead of waiting for the client's retry; requests that wait too long, or overflow a
/// queue, are answered 503 with a JSON error rather than kept for ever.
public struct BrokerCore {
    struct Request {
        var client: Frame
        var service: Frame
        var body: [Frame]
        var queuedAt: Int64
        var requeues = 0
        /// How the client asked, and so how it is answered.
        var envelope = MDP.Envelope.standard
    }

    struct Worker {
        let identity: Frame
        let service: String
        var expiresAt: Int64
        var inFlight: Request?
        /// The envelope of the worker's latest message: its requests go in it.
        var envelope: MDP.Envelope
    }

    struct ServiceState {
        var queue = Deque<Request>()
        var idle = Deque<Frame>()
        var workers = Set<Frame>()
        var requests: UInt64 = 0
    }

    public let configuration: BrokerConfiguration
    private var workers: [Frame: Worker] = [:]
    private var services: [String: ServiceState] = [:]
    private var nextHeartbeatAt: Int64
    private var counters = BrokerStats()
    public private(set) var notices: [BrokerNotice] = []

    public init(configuration: BrokerConfiguration = .init(), now: Int64) {
        self.configuration = configuration
        self.nextHeartbeatAt = now + configuration.heartbeatInterval
    }

    private var workerLifetime: Int64 { configuration.heartbeatInterval * configuration.heartbeatLiveness }

    /// When `tick` next has work to do.
    public var nextDeadline: Int64 { nextHeartbeatAt }

    /// Hands over the notices gathered since the last call.
    public mutating func takeNotices() -> [BrokerNotice] {
        defer { notices.removeAll(keepingCapacity: true) }
        return notices
    }

    // MARK: Input

    /// A message from `sender` (its routing id), with `frames` after the routing id; `key` is the
    /// name its CURVE key was admitted under (nil without CURVE), which the policy goes by.
    public mutating func receive(
        from sender: Frame, key: String? = nil, frames: ArraySlice<Frame>, now: Int64, into out: inout [BrokerOutgoing]
    ) {
        let message: MDP.ToBroker
        let envelope = MDP.envelope(of: frames)
        do {
            message = try MDP.parseToBroker(frames)
        } catch {
            counters.malformed += 1
            notices.append(.protocolError(peer: sender, reason: error.description))
            // A peer that speaks MDPW01 but breaks the rules is told to go away, as the RFC says.
            if MDP.speaksWorker(frames) {
                deleteWorker(sender, now: now, notify: true, envelope: envelope, into: &out)
            }
            return
        }
        switch message {
        case .clientRequest(let service, let body):
            counters.requests += 1
            if envelope == .packed { counters.packed += 1 }
            let request = Request(client: sender, service: Frame(frame: service), body: body, queuedAt: now, envelope: envelope)
            if let policy = configuration.policy, !service.hasPrefix("mmi."),
                let refusal = policy.refusal(of: .call(service: service, op: ServiceRequest.op(in: body)), by: key)
            {
                refuse(refusal)
                out.append(errorReply(to: request, status: 403, code: "forbidden", message: refusal.reason))
                return
            }
            if service.hasPrefix("mmi.") {
                answerMMI(request, into: &out)
            } else {
                enqueue(request, for: service, now: now, into: &out)
            }
        case .ready(let service):
            if let policy = configuration.policy, workers[sender] == nil,
                let refusal = policy.refusal(of: .serve(service: service), by: key)
            {
                refuse(refusal)
                out.append(BrokerOutgoing(to: sender, frames: MDP.disconnect(envelope)))
                return
            }
            if workers[sender] != nil || service.hasPrefix("mmi.") {
                counters.malformed += 1
                notices.append(
                    .protocolError(
                        peer: sender,
                        reason: workers[sender] != nil ? "READY from a worker already registered" : "service names mmi.* are reserved"))
                deleteWorker(sender, now: now, notify: true, envelope: envelope, into: &out)
            } else {
                workers[sender] = Worker(identity: sender, service: service, expiresAt: now + workerLifetime, envelope: envelope)
                services[service, default: ServiceState()].workers.insert(sender)
                notices.append(.workerRegistered(service: service, worker: sender))
                // Answered at once, so the worker knows it is registered (its /readyz) without
                // waiting for the next heartbeat round, and learns what this broker reads (its metadata).
                out.append(BrokerOutgoing(to: sender, frames: MDP.heartbeat(envelope)))
                becomeIdle(sender, service: service, into: &out)
            }
        case .reply(let client, let body):
            // A worker answers the request it holds, and only its client: a REPLY naming another
            // client (one a worker could read off no message of its own) is a broken or hostile worker.
            guard var worker = workers[sender], let request = worker.inFlight, request.client == client else {
                counters.malformed += 1
                let holds = workers[sender]?.inFlight != nil
                notices.append(
                    .protocolError(
                        peer: sender, reason: holds ? "REPLY to another client than its request's" : "REPLY from a worker with no request"))
                deleteWorker(sender, now: now, notify: true, envelope: envelope, into: &out)
                return
            }
            counters.replies += 1
            if envelope == .packed { counters.packed += 1 }
            out.append(
                BrokerOutgoing(
                    to: request.client, frames: MDP.clientReply(service: request.service, body: body, envelope: request.envelope)))
            worker.inFlight = nil
            worker.expiresAt = now + workerLifetime
            worker.envelope = envelope
            workers[sender] = worker
            becomeIdle(sender, service: worker.service, into: &out)
        case .heartbeat:
            guard workers[sender] != nil else {
                notices.append(.protocolError(peer: sender, reason: "HEARTBEAT from an unknown worker"))
                out.append(BrokerOutgoing(to: sender, frames: MDP.disconnect(envelope)))
                return
            }
            workers[sender]!.expiresAt = now + workerLifetime
            workers[sender]!.envelope = envelope
        case .disconnect:
            if let worker = workers[sender] {
                notices.append(.workerDisconnected(service: worker.service, worker: sender))
            }
            deleteWorker(sender, now: now, notify: false, envelope: envelope, into: &out)
        }
    }

    /// A send to `peer` failed because it is no longer connected (ROUTER_MANDATORY said EHOSTUNREACH).
    /// `lostMessage` is what could not be sent: when it is the worker's REQUEST, that request never
    /// reached anyone, so giving it to another worker is not a retry and does not count as one (after
    /// a crash, several dead workers of the same instance may be tried in turn).
    public mutating func peerUnreachable(_ peer: Frame, lostMessage: [Frame] = [], now: Int64, into out: inout [BrokerOutgoing]) {
        if let worker = workers[peer] {
            notices.append(.workerDisconnected(service: worker.service, worker: peer))
            var undelivered = false
            if case .request? = try? MDP.parseBrokerToWorker(lostMessage) { undelivered = true }
            deleteWorker(peer, now: now, notify: false, requestWasDelivered: !undelivered, envelope: worker.envelope, into: &out)
        } else {
            counters.undeliverable += 1
        }
    }

    /// Heartbeats, expiry of silent workers, and of requests nobody will serve. Call when `now >= nextDeadline`.
    public mutating func tick(now: Int64, into out: inout [BrokerOutgoing]) {
        guard now >= nextHeartbeatAt else { return }
        nextHeartbeatAt = now + configuration.heartbeatInterval
        for (identity, worker) in workers where worker.expiresAt <= now {
            counters.expiredWorkers += 1
            notices.append(.workerExpired(service: worker.service, worker: identity))
            deleteWorker(identity, now: now, notify: true, envelope: worker.envelope, into: &out)
        }
        for (identity, worker) in workers {
            out.append(BrokerOutgoing(to: identity, frames: MDP.heartbeat(worker.envelope)))
        }
        for name in services.keys {
            while let oldest = services[name]!.queue.first, now - oldest.queuedAt >= configuration.requestTimeToLive {
                services[name]!.queue.removeFirst()
                counters.rejected += 1
                out.append(
                    errorReply(
                        to: oldest, status: 503, code: "no_worker",
                        message: "no worker of service '\(name)' answered within \(configuration.requestTimeToLive) ms"))
            }
        }
    }

    // MARK: Queries

    public var stats: BrokerStats {
        var stats = counters
        for (name, state) in services {
            stats.services[name] = .init(
                workers: state.workers.count, idle: state.idle.count, queued: state.queue.count, requests: state.requests)
        }
        return stats
    }

    public func workerCount(service: String) -> Int { services[service]?.workers.count ?? 0 }

    public func isWorker(_ identity: Frame) -> Bool { workers[identity] != nil }

    // MARK: Internals

    private mutating func refuse(_ refusal: BusRefusal) {
        counters.refused[RefusalCount(refusal), default: 0] += 1
        notices.append(.refused(refusal))
    }

    private mutating func answerMMI(_ request: Request, into out: inout [BrokerOutgoing]) {
        let code: String
        if request.service == Frame(frame: "mmi.service") {
            if let name = request.body.first?.utf8String {
                code = workerCount(service: name) > 0 ? "200" : "404"
            } else {
                code = "400"
            }
        } else {
            code = "501"
        }
        counters.replies += 1
        out.append(
            BrokerOutgoing(
                to: request.client,
                frames: MDP.clientReply(service: request.service, body: [Frame(frame: code)], envelope: request.envelope)))
    }

    // Per-service state is always mutated in place (`services[name, default:]`): copying a
    // ServiceState out and back would clone its queue on every request (copy-on-write).
    private mutating func enqueue(_ request: Request, for service: String, now: Int64, into out: inout [BrokerOutgoing]) {
        let maxQueued = configuration.maxQueuedPerService
        let queued = { (state: inout ServiceState) -> Int? in
            state.requests += 1
            guard state.queue.count < maxQueued else { return state.queue.count }
            state.queue.append(request)
            return nil
        }(&services[service, default: ServiceState()])
        if let queued {
            counters.rejected += 1
            out.append(
                errorReply(
                    to: request, status: 503, code: "queue_full",
                    message: "service '\(service)' has \(queued) requests waiting; try again later"))
            return
        }
        dispatch(service, into: &out)
    }

    private mutating func becomeIdle(_ identity: Frame, service: String, into out: inout [BrokerOutgoing]) {
        services[service, default: ServiceState()].idle.append(identity)
        dispatch(service, into: &out)
    }

    /// Pairs waiting requests with idle workers, oldest with longest idle.
    private mutating func dispatch(_ service: String, into out: inout [BrokerOutgoing]) {
        while let next = Self.pair(&services[service, default: ServiceState()]) {
            guard workers[next.worker] != nil else {
                services[service]!.queue.prepend(next.request)
                continue
            }
            workers[next.worker]!.inFlight = next.request
            out.append(
                BrokerOutgoing(
                    to: next.worker,
                    frames: MDP.request(client: next.request.client, body: next.request.body, envelope: workers[next.worker]!.envelope)))
        }
    }

    /// The oldest waiting request and the longest-idle worker, if there are both.
    private static func pair(_ state: inout ServiceState) -> (request: Request, worker: Frame)? {
        guard !state.queue.isEmpty, let worker = state.idle.popFirst() else { return nil }
        return (state.queue.removeFirst(), worker)
    }

    /// `envelope`: how the peer is told to disconnect (a registered worker's own, else that of its last message).
    private mutating func deleteWorker(
        _ identity: Frame, now: Int64, notify: Bool, requestWasDelivered: Bool = true, envelope: MDP.Envelope,
        into out: inout [BrokerOutgoing]
    ) {
        if notify {
            out.append(BrokerOutgoing(to: identity, frames: MDP.disconnect(workers[identity]?.envelope ?? envelope)))
        }
        guard let worker = workers.removeValue(forKey: identity) else { return }
        services[worker.service, default: ServiceState()].workers.remove(identity)
        if let index = services[worker.service]!.idle.firstIndex(of: identity) {
            services[worker.service]!.idle.remove(at: index)
        }
        if var request = worker.inFlight {
            if !requestWasDelivered {
                services[worker.service]!.queue.prepend(request)
            } else if request.requeues < configuration.maxRequeues {
                request.requeues += 1
                request.queuedAt = now
                counters.requeued += 1
                notices.append(.requestRequeued(service: worker.service))
                services[worker.service]!.queue.prepend(request)
            } else {
                counters.rejected += 1
                out.append(
                    errorReply(
                        to: request, status: 503, code: "worker_lost",
                        message: "the workers handling this request stopped responding"))
            }
        }
        dispatch(worker.service, into: &out)
    }

    /// A 503 the broker writes itself, in the body convention. Like a worker, it writes the
    /// request's correlation line back ahead, so a multiplexing client can match it.
    private func errorReply(to request: Request, status: Int, code: String, message: String) -> BrokerOutgoing {
        let body = ServiceReply.error(status: status, code: code, message: message).frames(answering: request.body)
        return BrokerOutgoing(to: request.client, frames: MDP.clientReply(service: request.service, body: body, envelope: request.envelope))
    }
}
