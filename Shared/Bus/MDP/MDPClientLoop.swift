import DequeModule
import Logging
import Synchronization
import ZeroMQ

/// The client's thread: receives on the shared socket, owns the lanes, keeps the deadlines.
struct ClientLoop {
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
                try lanes[index].socket.send(
                    message: pending.message(brokerPacks: shared.brokerPacks.load(ordering: .relaxed)), dontWait: true)
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
            var announced: String?
            more = shared.connection.withLock { socket in
                while received.count < 64, (try? socket.canReceive) == true,
                    let (frames, value) = try? socket.receive(dontWait: true, property: MDP.envelopeProperty.name)
                {
                    received.append(frames)
                    announced = value
                }
                return received.count == 64
            }
            if !received.isEmpty { heard(announced) }
            for frames in received { deliverMultiplexed(frames) }
        }
    }

    /// What the broker's latest message announced: whether it reads requests packed into one frame.
    func heard(_ announced: String?) {
        shared.brokerPacks.store(MDP.envelope(announced: announced) == .packed, ordering: .relaxed)
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
                guard let (received, announced) = try lane.socket.receive(dontWait: true, property: MDP.envelopeProperty.name) else {
                    return
                }
                frames = received
                heard(announced)
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
            logger.debug(
                "request timed out, retrying", metadata: ["service": "\(pending.service)", "attempts_left": "\(pending.attemptsLeft)"])
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
