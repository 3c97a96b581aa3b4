import Logging
import Synchronization
import ZeroMQ

/// A 7/MDP worker: registers a service with the broker and answers its requests.
///
/// MDP/0.1 gives a worker one request at a time, so a worker process opens `concurrency`
/// connections to the broker, each a worker in the RFC's sense; the broker spreads requests over
/// all of them (and over every process of the service). One thread owns the connections: it sends
/// heartbeats, notices a silent broker and reconnects (sending READY again), and runs the handlers.
///
/// Handlers are tasks whose executor is that same thread (`LoopExecutor`): a request is received,
/// handled and answered without crossing threads. A handler that awaits work elsewhere (a database,
/// another service) frees the thread meanwhile and resumes on it. Handlers must not block.
public final class MDPWorker: Sendable {
    public struct Options: Sendable {
        public var heartbeatInterval: Duration = .milliseconds(2500)
        public var heartbeatLiveness: Int64 = 3
        public var reconnectDelay: Duration = .milliseconds(1000)
        /// Requests handled at once by this process.
        public var concurrency = 8
        /// How long `stop()` waits for requests in progress.
        public var drainTimeout: Duration = .seconds(10)
        public init() {}
    }

    enum Command: Sendable {
        case reply(connection: Int, generation: UInt64, client: Frame, body: [Frame])
    }

    final class Shared: Sendable {
        let commands = Mailbox<Command>()
        let executor: LoopExecutor
        let stopRequested = StopFlag()
        let handled = Atomic<UInt64>(0)
        /// When a connection last heard from the broker (MonotonicClock ms; 0: never).
        let lastHeard = Atomic<Int64>(0)
        init() { executor = LoopExecutor(waker: commands.waker) }
    }

    public typealias Handler = @Sendable (_ body: [Frame]) async -> [Frame]

    public let service: String
    public let endpoint: String
    public let options: Options
    private let logger: Logger
    private let shared = Shared()

    public init(endpoint: String, service: String, options: Options = .init(), logger: Logger) {
        self.endpoint = endpoint
        self.service = service
        self.options = options
        self.logger = logger
    }

    /// Serves until `stop()`: returns once requests in progress have been answered (or `drainTimeout` passed).
    /// Throws when the endpoint is malformed.
    public func run(handler: @escaping Handler) async throws {
        let shared = self.shared
        let (endpoint, service, options, logger) = (self.endpoint, self.service, self.options, self.logger)
        let (thread, _) = try await OwnedThread.start(name: "mdp-worker-\(service)") { ready in
            do {
                let probe = try Socket(.dealer)
                try probe.connect(endpoint)
                probe.close()
                ready(.success(()))
            } catch {
                ready(.failure(error))
                return
            }
            var loop = WorkerLoop(endpoint: endpoint, service: service, options: options, shared: shared, logger: logger, handler: handler)
            loop.run()
        }
        await thread.join()
    }

    /// Stops taking requests: idle connections say DISCONNECT now, busy ones after their reply.
    public func stop() {
        shared.stopRequested.request()
        shared.commands.waker.wake()
    }

    /// Requests answered so far.
    public var handledCount: UInt64 { shared.handled.load(ordering: .relaxed) }

    /// Whether the broker has registered this worker: it heard from the broker (which answers READY
    /// with a heartbeat and then heartbeats every idle worker) within the heartbeat liveness.
    public var isRegistered: Bool {
        let heard = shared.lastHeard.load(ordering: .relaxed)
        return heard > 0 && MonotonicClock.milliseconds() - heard < options.heartbeatInterval.milliseconds * options.heartbeatLiveness
    }
}

/// The worker's thread.
private struct WorkerLoop {
    struct Connection {
        var socket: Socket?
        /// Bumped on every reconnect: a reply for an older generation belongs to a broker session that is gone.
        var generation: UInt64 = 0
        var busyWith: Frame?
        var brokerDeadline: Int64 = .max
        var reconnectAt: Int64 = 0
        /// How this connection writes: packed once the broker announced it reads that (`MDP.Envelope`).
        var envelope = MDP.Envelope.standard
    }

    let endpoint: String
    let service: String
    let options: MDPWorker.Options
    let shared: MDPWorker.Shared
    let logger: Logger
    let handler: MDPWorker.Handler
    var connections: [Connection]
    /// Token 0 is the waker; token `i + 1` is connection `i`.
    var poller = ReadinessPoller()
    var nextHeartbeatAt: Int64 = 0
    let heartbeat: Int64
    let brokerSilenceLimit: Int64

    init(
        endpoint: String, service: String, options: MDPWorker.Options, shared: MDPWorker.Shared, logger: Logger,
        handler: @escaping MDPWorker.Handler
    ) {
        self.endpoint = endpoint
        self.service = service
        self.options = options
        self.shared = shared
        self.logger = logger
        self.handler = handler
        self.connections = Array(repeating: Connection(), count: max(1, options.concurrency))
        self.heartbeat = options.heartbeatInterval.milliseconds
        self.brokerSilenceLimit = heartbeat * options.heartbeatLiveness
    }

    mutating func run() {
        // Wakes from this thread (handlers it runs posting replies, tasks it starts) need no pipe write.
        shared.commands.waker.claimOwnership()
        do {
            try poller.add(fileDescriptor: shared.commands.waker.fileDescriptor, token: 0)
        } catch {
            logger.error("worker cannot poll", metadata: ["error": "\(error)"])
            return
        }
        let now = MonotonicClock.milliseconds()
        for index in connections.indices { connect(index, now: now) }
        nextHeartbeatAt = now + heartbeat
        var stopDeadline: Int64?

        while true {
            let now = MonotonicClock.milliseconds()
            if shared.stopRequested.isRequested {
                if stopDeadline == nil {
                    stopDeadline = now + options.drainTimeout.milliseconds
                    logger.info("worker stopping", metadata: ["service": "\(service)"])
                }
                disconnectIdle()
                if connections.allSatisfy({ $0.socket == nil }) || now >= stopDeadline! { break }
            }
            var deadline = nextHeartbeatAt
            for c in connections {
                // While stopping, closed connections stay closed: their reconnect time does not count.
                if c.socket == nil && stopDeadline != nil { continue }
                deadline = min(deadline, c.socket == nil ? c.reconnectAt : c.brokerDeadline)
            }
            if let stopDeadline { deadline = min(deadline, stopDeadline) }
            let busy = shared.executor.hasJobs || !shared.commands.isEmpty
            let ready = poller.wait(timeoutMilliseconds: busy ? 0 : Int(max(0, min(1000, deadline - now))))
            if ready.contains(0) { shared.commands.waker.drain() }
            for command in shared.commands.take() { handle(command) }
            for token in ready where token > 0 && connections[token - 1].socket != nil {
                receive(on: token - 1)
            }
            // Run the handlers here, then send what they answered at once, without another poll.
            shared.executor.runQueuedJobs()
            for command in shared.commands.take() { handle(command) }
            timers(now: MonotonicClock.milliseconds(), stopping: stopDeadline != nil)
        }
        for index in connections.indices { close(index, sayDisconnect: true) }
        // Handlers still awaiting something elsewhere finish on the global executor.
        shared.executor.shutDown()
    }

    mutating func connect(_ index: Int, now: Int64) {
        do {
            let socket = try Socket(.dealer)
            try socket.setReconnectInterval(milliseconds: 100, maxMilliseconds: 2000)
            try socket.connect(endpoint)
            try socket.send(message: MDP.ready(service: service))
            try poller.add(socket, token: index + 1)
            connections[index].socket = socket
            connections[index].generation += 1
            connections[index].busyWith = nil
            connections[index].brokerDeadline = now + brokerSilenceLimit
            connections[index].envelope = .standard
            rearm(index)
        } catch {
            logger.error("worker cannot connect", metadata: ["endpoint": "\(endpoint)", "error": "\(error)"])
            connections[index].reconnectAt = now + options.reconnectDelay.milliseconds
        }
    }

    /// After a send on a connection: the send may have taken the signal of a message that arrived
    /// meanwhile, so look now rather than wait for an edge that will not come.
    mutating func rearm(_ index: Int) {
        if let socket = connections[index].socket, (try? socket.canReceive) == true {
            poller.markReady(index + 1)
        }
    }

    mutating func close(_ index: Int, sayDisconnect: Bool) {
        guard let socket = connections[index].socket else { return }
        if sayDisconnect { _ = try? socket.send(message: MDP.disconnect(connections[index].envelope), dontWait: true) }
        poller.remove(socket)
        socket.close()
        connections[index].socket = nil
        connections[index].busyWith = nil
    }

    mutating func disconnectIdle() {
        for index in connections.indices where connections[index].socket != nil && connections[index].busyWith == nil {
            close(index, sayDisconnect: true)
        }
    }

    mutating func handle(_ command: MDPWorker.Command) {
        switch command {
        case .reply(let index, let generation, let client, let body):
            guard connections[index].generation == generation, let socket = connections[index].socket else {
                logger.debug("reply dropped: its broker session is gone", metadata: ["service": "\(service)"])
                return
            }
            do {
                try socket.send(message: MDP.reply(client: client, body: body, envelope: connections[index].envelope))
            } catch {
                logger.error("reply send failed", metadata: ["error": "\(error)"])
            }
            connections[index].busyWith = nil
            // A busy worker gets no heartbeats from some brokers (the zguide's): count silence from now.
            connections[index].brokerDeadline = MonotonicClock.milliseconds() + brokerSilenceLimit
            shared.handled.add(1, ordering: .relaxed)
            rearm(index)
        }
    }

    mutating func receive(on index: Int) {
        while let socket = connections[index].socket {
            let frames: [Frame]
            let announced: String?
            do {
                guard let received = try socket.receive(dontWait: true, property: MDP.envelopeProperty.name) else { return }
                (frames, announced) = received
            } catch {
                logger.error("worker receive failed", metadata: ["error": "\(error)"])
                return
            }
            let now = MonotonicClock.milliseconds()
            connections[index].brokerDeadline = now + brokerSilenceLimit
            shared.lastHeard.store(now, ordering: .relaxed)
            do {
                switch try MDP.parseBrokerToWorker(frames) {
                case .request(let client, let body):
                    heard(MDP.envelope(announced: announced), on: index)
                    guard connections[index].busyWith == nil else {
                        logger.warning("broker sent a second request to a busy connection; ignored")
                        continue
                    }
                    connections[index].busyWith = client
                    start(index: index, generation: connections[index].generation, client: client, body: body)
                case .heartbeat:
                    heard(MDP.envelope(announced: announced), on: index)
                case .disconnect:
                    logger.info("broker said DISCONNECT; registering again", metadata: ["service": "\(service)"])
                    close(index, sayDisconnect: false)
                    if !shared.stopRequested.isRequested { connect(index, now: now) }
                    return
                }
            } catch {
                logger.warning("invalid message from broker", metadata: ["error": "\(error)"])
            }
        }
    }

    /// The broker announced `envelope`. Going packed, the connection says so at once with a packed
    /// HEARTBEAT: the broker sends a worker its requests in the envelope of the worker's last message.
    mutating func heard(_ envelope: MDP.Envelope, on index: Int) {
        guard connections[index].envelope != envelope, let socket = connections[index].socket else { return }
        connections[index].envelope = envelope
        if envelope == .packed { _ = try? socket.send(message: MDP.heartbeat(.packed), dontWait: true) }
    }

    /// Starts the handler as a task on this thread's executor; its reply comes back as a command.
    func start(index: Int, generation: UInt64, client: Frame, body: [Frame]) {
        let (handler, commands) = (self.handler, shared.commands)
        Task(executorPreference: shared.executor) {
            let reply = await handler(body)
            commands.post(.reply(connection: index, generation: generation, client: client, body: reply))
        }
    }

    mutating func timers(now: Int64, stopping: Bool) {
        for index in connections.indices {
            if connections[index].socket == nil {
                if !stopping && now >= connections[index].reconnectAt { connect(index, now: now) }
            } else if connections[index].busyWith == nil && now >= connections[index].brokerDeadline {
                logger.warning("broker silent; reconnecting", metadata: ["service": "\(service)", "after_ms": "\(brokerSilenceLimit)"])
                close(index, sayDisconnect: false)
                connections[index].reconnectAt = now + options.reconnectDelay.milliseconds
            }
        }
        if now >= nextHeartbeatAt {
            nextHeartbeatAt = now + heartbeat
            for index in connections.indices where connections[index].socket != nil {
                _ = try? connections[index].socket?.send(message: MDP.heartbeat(connections[index].envelope), dontWait: true)
                rearm(index)
            }
        }
    }
}
