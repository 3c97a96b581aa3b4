import DequeModule
import Logging
import Synchronization
import ZeroMQ

/// Why a request got no reply.
public enum MDPClientError: Error, Equatable, Sendable, CustomStringConvertible {
    /// No reply after every attempt (the zguide's Lazy Pirate gives up here).
    case timeout(service: String, attempts: Int, milliseconds: Int64)
    /// The broker sent something that is not a 7/MDP reply.
    case invalidReply(String)
    case closed
    case cancelled

    public var description: String {
        switch self {
        case .timeout(let service, let attempts, let ms):
            "no reply from service '\(service)' after \(attempts) attempt\(attempts == 1 ? "" : "s") of \(ms) ms (is a worker running? try `ridectl status`; a bus secured with CURVE answers only clients with an allowed key)"
        case .invalidReply(let why): "invalid reply from the broker: \(why)"
        case .closed: "the client is closed"
        case .cancelled: "the request was cancelled"
        }
    }
}

/// A 7/MDP client: sends `[service][body]` through the broker and awaits the reply.
///
/// MDP/0.1 has no request ids, so a reply can only be matched to its request by the socket it
/// comes back on. The client therefore has two ways to send, chosen per service:
///
/// - **Multiplexed**, for services that echo a correlation line: a request made with
///   `correlated: true` starts with a line holding its id (`RequestID`: `r<id>\n<op>\n<JSON>` in
///   our body convention), and our workers write it back ahead of their reply. Such requests share one
///   socket, any number in flight — one TCP connection, batched writes and reads. The calling task
///   sends them itself, under the socket's lock; the client's thread only receives.
/// - **Exclusive**, for everything else (MMI, foreign workers, a service seen for the first time):
///   a pool of DEALER "lanes" owned by the client's thread, each with one request in flight. This
///   is plain MDP and works with any worker. Lanes idle for a while are closed.
///
/// Whether a service echoes is learned from its first reply, never assumed: while it is unknown,
/// one request probes on a lane and the others wait for its answer. If a reply without the
/// line ever arrives on the shared socket (a foreign worker joined the service), it cannot be
/// attributed: the requests of that service in flight there are resent on exclusive lanes and the
/// service is no longer multiplexed.
///
/// A request that times out is retried (the Lazy Pirate pattern): on a lane, over a fresh socket,
/// so a late reply to the old one is never mistaken for the next request's; on the shared socket
/// with the same request id, so a late reply still answers it.
public final class MDPClient: Sendable {
    public struct Options: Sendable {
        /// How long one attempt waits for its reply.
        public var timeout: Duration = .milliseconds(2500)
        /// Attempts per request, the first included.
        public var attempts = 3
        /// Exclusive lanes (requests in flight at once to services that do not echo request ids).
        public var maxLanes = 64
        public init() {}
    }

    struct Pending: Sendable {
        let id: UInt64
        let service: String
        let body: [Frame]
        let correlated: Bool
        let timeout: Int64
        var attemptsLeft: Int
        let attempts: Int
        var deadline: Int64 = .max
        let continuation: CheckedContinuation<[Frame], any Error>

        /// Counts an attempt and sets its deadline.
        mutating func startAttempt() {
            attemptsLeft -= 1
            deadline = MonotonicClock.milliseconds() + timeout
        }
    }

    /// What the client knows about a service: whether its workers echo the correlation line.
    enum Echo: Sendable { case unknown, echoes, doesNot }

    enum Command: Sendable {
        case request(Pending)
        case cancel(UInt64)
    }

    /// Requests the client knows about, and whether it still takes new ones. One lock for both, so
    /// a request is either registered before the client closes (and then failed by it) or refused.
    struct Registry {
        var closed = false
        /// Requests in flight on the shared socket, by request id.
        var outstanding: [UInt64: Pending] = [:]
    }

    /// The multiplexed socket and what the callers and the client's thread share about it.
    final class Shared: Sendable {
        let commands = Mailbox<Command>()
        /// Runs tasks on the client's thread, between its polls (see `MDPClient.executor`).
        let executor: LoopExecutor
        let stopRequested = StopFlag()
        let nextID = Atomic<UInt64>(1)
        /// The shared socket, touched only under its lock: libzmq lets a socket be used by several
        /// threads one at a time with a full memory barrier in between (zmq_socket(3)), which the
        /// mutex provides. The client's thread watches `signalDescriptor` with plain poll(2).
        let connection: Mutex<Socket>
        let signalDescriptor: Int32
        let registry = Mutex(Registry())
        let echo = Mutex<[String: Echo]>([:])
        /// Set when a send found a reply already waiting (the send may have consumed the descriptor's
        /// edge); the client's thread then receives before it sleeps. Needed because a wake from the
        /// client's own thread (an executor job, a retry) writes nothing.
        let replyWaiting = Atomic<Bool>(false)

        init(connection socket: sending Socket) throws {
            executor = LoopExecutor(waker: commands.waker)
            signalDescriptor = try socket.signalDescriptor
            connection = Mutex(socket)
        }

        func sendMultiplexed(_ pending: Pending) throws {
            let waiting = try connection.withLock { socket in
                try socket.send(message: MDP.clientRequest(service: pending.service, body: pending.body))
                return try socket.canReceive
            }
            if waiting {
                replyWaiting.store(true, ordering: .releasing)
                commands.waker.wake()
            }
        }
    }

    /// Links a request with its cancellation: the cancel is posted only once the client knows the
    /// request, so it always finds it (and a cancel after the reply finds nothing, harmlessly).
    final class CancellationToken: Sendable {
        private static let new: UInt8 = 0, registered: UInt8 = 1, cancelled: UInt8 = 2
        private let state = Atomic<UInt8>(CancellationToken.new)

        /// The request is registered; true when it was cancelled meanwhile (post the cancel now).
        func markRegistered() -> Bool {
            !state.compareExchange(expected: Self.new, desired: Self.registered, ordering: .acquiringAndReleasing).exchanged
        }

        /// The task was cancelled; true when the request is registered (post the cancel now).
        func markCancelled() -> Bool {
            state.exchange(Self.cancelled, ordering: .acquiringAndReleasing) == Self.registered
        }
    }

    public let options: Options
    public let endpoint: String
    private let shared: Shared
    private let thread: OwnedThread

    /// Connects to the broker at `endpoint` (`RIDE_BROKER`).
    public init(endpoint: String, options: Options = .init(), logger: Logger) async throws {
        self.options = options
        self.endpoint = endpoint
        // The shared socket is made here and then only used under its lock.
        shared = try Shared(connection: try ClientLoop.makeSocket(endpoint))
        let shared = self.shared
        (thread, _) = try await OwnedThread.start(name: "mdp-client") { ready in
            ready(.success(()))
            var loop = ClientLoop(endpoint: endpoint, options: options, shared: shared, logger: logger)
            loop.run()
        }
    }

    /// Sends `body` to `service` and returns the reply body. Throws `MDPClientError`.
    ///
    /// With `correlated`, the client writes a correlation line ahead of the body's first frame and
    /// expects the reply to start with it (taking it off before returning); services that echo it
    /// get requests multiplexed over one socket. Use it only with workers that follow our body
    /// convention (`OpRouter`); others still work, on exclusive lanes, if they skip the line.
    /// `trace` rides in the line (see `RequestID`), so it needs `correlated`.
    public func request(
        service: String, body: [Frame], correlated: Bool = false, timeout: Duration? = nil, attempts: Int? = nil, trace: TraceHeaders? = nil
    ) async throws -> [Frame] {
        let id = shared.nextID.add(1, ordering: .relaxed).oldValue
        let timeoutMs = (timeout ?? options.timeout).milliseconds
        let attempts = max(1, attempts ?? options.attempts)
        let shared = self.shared
        let token = CancellationToken()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                guard !Task.isCancelled else {
                    continuation.resume(throwing: MDPClientError.cancelled)
                    return
                }
                var pending = Pending(
                    id: id, service: service, body: correlated ? RequestID.prefixed(body, id: id, trace: trace) : body, correlated: correlated,
                    timeout: timeoutMs, attemptsLeft: attempts, attempts: attempts, continuation: continuation)
                let multiplexed = correlated && shared.echo.withLock({ $0[service] }) == .echoes
                if multiplexed { pending.startAttempt() }
                let accepted = shared.registry.withLock { registry -> Bool in
                    guard !registry.closed else { return false }
                    if multiplexed {
                        registry.outstanding[id] = pending
                    } else {
                        shared.commands.post(.request(pending))
                    }
                    return true
                }
                guard accepted else {
                    continuation.resume(throwing: MDPClientError.closed)
                    return
                }
                if multiplexed {
                    do {
                        try shared.sendMultiplexed(pending)
                    } catch {
                        // Counted as a lost attempt: the client's thread retries it when its deadline passes.
                    }
                }
                if token.markRegistered() { shared.commands.post(.cancel(id)) }
            }
        } onCancel: {
            if token.markCancelled() { shared.commands.post(.cancel(id)) }
        }
    }

    /// The client's own thread as a task executor. A task that prefers it
    /// (`withTaskExecutorPreference(client.executor) { … }`) resumes from a reply on the thread
    /// that received it, saving a hand-off to the cooperative pool (tens of microseconds here).
    /// Such a task must not block: it shares the thread with every reply of this client.
    public var executor: any TaskExecutor { shared.executor }

    /// Fails what is still waiting with `.closed` and closes every socket.
    public func close() async {
        shared.stopRequested.request()
        shared.commands.waker.wake()
        await thread.join()
    }
}

/// The client's thread: receives on the shared socket, owns the lanes, keeps the deadlines.
private struct ClientLoop {
    final class Lane {
        var socket: Socket
        var current: MDPClient.Pending?
        var idleSince: Int64 = 0
        init(socket: Socket) { self.socket = socket }
    }

    /// Lanes idle this long are closed (down to `keptLanes`), so the poll set stays small.
    static let laneIdleLimit: Int64 = 5000
    static let keptLanes = 2

    let endpoint: String
    let options: MDPClient.Options
    let shared: MDPClient.Shared
    let logger: Logger
    var lanes: [Lane] = []
    var busyLanes = 0
    var waiting = Deque<MDPClient.Pending>()
    /// For each service whose echo behaviour is unknown, the request probing it on a lane.
    var probing: [String: UInt64] = [:]
    var poller = Poller()
    var pollerIsStale = true

    init(endpoint: String, options: MDPClient.Options, shared: MDPClient.Shared, logger: Logger) {
        self.endpoint = endpoint
        self.options = options
        self.shared = shared
        self.logger = logger
    }

    static func makeSocket(_ endpoint: String) throws -> Socket {
        let socket = try Socket(.dealer)
        try socket.setReconnectInterval(milliseconds: 100, maxMilliseconds: 2000)
        try socket.setSendHighWaterMark(0)
        try socket.setReceiveHighWaterMark(0)
        try socket.connect(endpoint)
        return socket
    }

    mutating func run() {
        // Wakes from this thread (tasks running on the client's executor) need no pipe write.
        shared.commands.waker.claimOwnership()
        // Deadlines are checked on a coarse tick rather than on every wake-up: timeouts are hundreds
        // of milliseconds, so 10 ms of slack is nothing, and scanning costs more than the messages.
        var nextScan: Int64 = 0
        while !shared.stopRequested.isRequested {
            if pollerIsStale { rebuildPoller() }
            let inFlight = busyLanes > 0 || !waiting.isEmpty || shared.registry.withLock { !$0.outstanding.isEmpty }
            let runnable = shared.executor.hasJobs || !shared.commands.isEmpty || shared.replyWaiting.load(ordering: .acquiring)
            do {
                try poller.poll(timeoutMilliseconds: runnable ? 0 : inFlight ? 10 : 1000)
            } catch {
                logger.error("client poll failed", metadata: ["error": "\(error)"])
                break
            }
            let polledLanes = pollerIsStale ? 0 : poller.count - 2
            for command in shared.commands.take() { handle(command) }
            receiveMultiplexed()
            // Lanes the poll saw readable; lanes added since (poller stale) are new and cannot have replies.
            for index in 0..<polledLanes where poller.isReadable(index + 2) && lanes[index].current != nil {
                receiveReplies(onLane: index)
            }
            // Callers that prefer this thread continue here, right after their replies.
            shared.executor.runQueuedJobs()
            let now = MonotonicClock.milliseconds()
            if now >= nextScan {
                nextScan = now + 10
                expireOverdue(now: now)
                closeIdleLanes(now: now)
            }
            for command in shared.commands.take() { handle(command) }
            startWaiting()
        }
        failEverything()
    }

    mutating func rebuildPoller() {
        poller.removeAll()
        poller.add(fileDescriptor: shared.commands.waker.fileDescriptor)
        poller.add(fileDescriptor: shared.signalDescriptor)
        for lane in lanes { poller.add(lane.socket) }
        pollerIsStale = false
    }

    mutating func handle(_ command: MDPClient.Command) {
        switch command {
        case .request(let pending):
            waiting.append(pending)
        case .cancel(let id):
            // The token posts a cancel only after the request is registered; one that finds nothing
            // came after the request was answered.
            if let index = waiting.firstIndex(where: { $0.id == id }) {
                let pending = waiting.remove(at: index)
                endProbe(pending)
                pending.continuation.resume(throwing: MDPClientError.cancelled)
            } else if let pending = shared.registry.withLock({ $0.outstanding.removeValue(forKey: id) }) {
                // A late reply carries an id nobody waits for any more: it is dropped.
                pending.continuation.resume(throwing: MDPClientError.cancelled)
            } else if let index = lanes.firstIndex(where: { $0.current?.id == id }) {
                let pending = lanes[index].current!
                finishLane(index)
                replaceSocket(of: lanes[index])
                endProbe(pending)
                pending.continuation.resume(throwing: MDPClientError.cancelled)
            }
        }
    }

    /// `pending` no longer probes its service (answered, failed or cancelled): another may.
    mutating func endProbe(_ pending: MDPClient.Pending) {
        if probing[pending.service] == pending.id { probing[pending.service] = nil }
    }

    /// Sends what waits: multiplexed where the service echoes, else on an idle lane (opening lanes
    /// up to `maxLanes`); what finds no lane waits for one.
    mutating func startWaiting() {
        guard !waiting.isEmpty else { return }
        let echo = shared.echo.withLock { $0 }
        var stillWaiting = Deque<MDPClient.Pending>()
        while var pending = waiting.popFirst() {
            if pending.correlated && echo[pending.service] == .echoes {
                pending.startAttempt()
                shared.registry.withLock { $0.outstanding[pending.id] = pending }
                do {
                    try shared.sendMultiplexed(pending)
                } catch {
                    logger.warning("request send failed", metadata: ["service": "\(pending.service)", "error": "\(error)"])
                }
                continue
            }
            // While a service's echo behaviour is unknown, one request probes it and the others
            // wait for the answer (a retried probe is still the probe).
            let isProbe = pending.correlated && echo[pending.service, default: .unknown] == .unknown
            if isProbe, let probe = probing[pending.service], probe != pending.id {
                stillWaiting.append(pending)
                continue
            }
            guard let index = idleLane() else {
                stillWaiting.append(pending)
                continue
            }
            if isProbe { probing[pending.service] = pending.id }
            pending.startAttempt()
            lanes[index].current = pending
            busyLanes += 1
            do {
                try lanes[index].socket.send(message: MDP.clientRequest(service: pending.service, body: pending.body), dontWait: true)
            } catch {
                // Counted as a lost attempt: the deadline retries it on a fresh socket.
                logger.warning("request send failed", metadata: ["service": "\(pending.service)", "error": "\(error)"])
            }
        }
        waiting = stillWaiting
    }

    mutating func idleLane() -> Int? {
        if let index = lanes.lastIndex(where: { $0.current == nil }) { return index }
        guard lanes.count < options.maxLanes, let socket = try? Self.makeSocket(endpoint) else { return nil }
        lanes.append(Lane(socket: socket))
        pollerIsStale = true
        return lanes.count - 1
    }

    /// A lane's request is over (answered, failed or cancelled): the lane is idle again.
    mutating func finishLane(_ index: Int) {
        lanes[index].current = nil
        lanes[index].idleSince = MonotonicClock.milliseconds()
        busyLanes -= 1
    }

    mutating func closeIdleLanes(now: Int64) {
        guard lanes.count > Self.keptLanes else { return }
        let stale = lanes.indices.filter { lanes[$0].current == nil && now - lanes[$0].idleSince > Self.laneIdleLimit }
        guard !stale.isEmpty else { return }
        for index in stale.reversed().prefix(lanes.count - Self.keptLanes) {
            lanes[index].socket.close()
            lanes.remove(at: index)
        }
        pollerIsStale = true
    }

    /// Everything waiting on the shared socket. Called after every wake-up, not only when its
    /// descriptor fired: the descriptor is edge-triggered, and reading `canReceive` re-arms it.
    mutating func receiveMultiplexed() {
        shared.replyWaiting.store(false, ordering: .releasing)
        var more = true
        while more {
            // Short bursts under the lock, parsing outside it: callers send on this socket meanwhile.
            var received: [[Frame]] = []
            more = shared.connection.withLock { socket in
                while received.count < 64, (try? socket.canReceive) == true, let frames = try? socket.receive(dontWait: true) {
                    received.append(frames)
                }
                return received.count == 64
            }
            for frames in received { deliverMultiplexed(frames) }
        }
    }

    mutating func deliverMultiplexed(_ frames: [Frame]) {
        guard let (service, body) = try? MDP.parseClientReply(frames) else {
            logger.warning("invalid reply on the shared socket dropped")
            return
        }
        guard let (id, reply) = RequestID.split(body) else {
            // A worker of this service does not echo request ids: whatever is in flight for it
            // here cannot be told apart. Send those again, one per lane, from now on.
            shared.echo.withLock { $0[service] = .doesNot }
            let affected = shared.registry.withLock { registry in
                let affected = registry.outstanding.values.filter { $0.service == service }
                for pending in affected { registry.outstanding[pending.id] = nil }
                return affected
            }
            logger.warning(
                "a worker of this service does not echo request ids; using one request per connection",
                metadata: ["service": "\(service)", "resent": "\(affected.count)"])
            for var pending in affected {
                pending.attemptsLeft += 1
                waiting.append(pending)
            }
            return
        }
        // An id nobody waits for is a late reply to a request already answered or given up.
        guard let pending = shared.registry.withLock({ $0.outstanding.removeValue(forKey: id) }) else { return }
        pending.continuation.resume(returning: reply)
    }

    mutating func receiveReplies(onLane index: Int) {
        let lane = lanes[index]
        while lane.current != nil {
            let frames: [Frame]
            do {
                guard let received = try lane.socket.receive(dontWait: true) else { return }
                frames = received
            } catch {
                logger.error("client receive failed", metadata: ["error": "\(error)"])
                return
            }
            guard let pending = lane.current else { return }
            do {
                let (service, body) = try MDP.parseClientReply(frames)
                guard service == pending.service else {
                    logger.warning("reply for another service ignored", metadata: ["expected": "\(pending.service)", "got": "\(service)"])
                    continue
                }
                finishLane(index)
                guard pending.correlated else {
                    pending.continuation.resume(returning: body)
                    continue
                }
                endProbe(pending)
                // Learn from the reply whether this service echoes request ids.
                if let (id, reply) = RequestID.split(body), id == pending.id {
                    shared.echo.withLock { if $0[service] != .doesNot { $0[service] = .echoes } }
                    pending.continuation.resume(returning: reply)
                } else {
                    shared.echo.withLock { $0[service] = .doesNot }
                    pending.continuation.resume(returning: body)
                }
            } catch {
                finishLane(index)
                endProbe(pending)
                pending.continuation.resume(throwing: MDPClientError.invalidReply(error.description))
            }
        }
    }

    mutating func expireOverdue(now: Int64) {
        let overdue = shared.registry.withLock { registry in
            let overdue = registry.outstanding.values.filter { $0.deadline <= now }
            for pending in overdue { registry.outstanding[pending.id] = nil }
            return overdue
        }
        for pending in overdue { retryOrFail(pending) }
        for index in lanes.indices {
            guard let pending = lanes[index].current, pending.deadline <= now else { continue }
            finishLane(index)
            replaceSocket(of: lanes[index])
            retryOrFail(pending)
        }
    }

    mutating func retryOrFail(_ pending: MDPClient.Pending) {
        if pending.attemptsLeft > 0 {
            logger.debug("request timed out, retrying", metadata: ["service": "\(pending.service)", "attempts_left": "\(pending.attemptsLeft)"])
            waiting.append(pending)
        } else {
            let error = MDPClientError.timeout(service: pending.service, attempts: pending.attempts, milliseconds: pending.timeout)
            pending.continuation.resume(throwing: error)
            // A probe that got no answer at all: the requests waiting on it would get none either.
            if probing[pending.service] == pending.id {
                probing[pending.service] = nil
                let (failed, kept) = waiting.reduce(into: ([MDPClient.Pending](), Deque<MDPClient.Pending>())) { result, waiter in
                    if waiter.service == pending.service && waiter.correlated { result.0.append(waiter) } else { result.1.append(waiter) }
                }
                waiting = kept
                for waiter in failed { waiter.continuation.resume(throwing: error) }
            }
        }
    }

    /// A fresh socket (new routing id) for a lane whose request was abandoned, so a late reply to the
    /// old one is never mistaken for the reply to the next request.
    mutating func replaceSocket(of lane: Lane) {
        guard let socket = try? Self.makeSocket(endpoint) else { return }
        lane.socket.close()
        lane.socket = socket
        pollerIsStale = true
    }

    /// The end: no request is taken any more (under the registry's lock, so none slips in), every
    /// one known is failed, sockets close, and tasks preferring our executor move to the global one.
    mutating func failEverything() {
        let outstanding = shared.registry.withLock { registry in
            registry.closed = true
            defer { registry.outstanding = [:] }
            return registry.outstanding.values
        }
        for pending in outstanding { pending.continuation.resume(throwing: MDPClientError.closed) }
        for lane in lanes {
            lane.current?.continuation.resume(throwing: MDPClientError.closed)
            lane.socket.close()
        }
        while let pending = waiting.popFirst() { pending.continuation.resume(throwing: MDPClientError.closed) }
        for command in shared.commands.take() {
            if case .request(let pending) = command { pending.continuation.resume(throwing: MDPClientError.closed) }
        }
        shared.connection.withLock { $0.close() }
        shared.executor.shutDown()
    }
}
