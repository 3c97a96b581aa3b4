import DequeModule
import Logging
import Synchronization
import ZeroMQ

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

        /// The attempt's envelope: packed when the broker said it reads it, except for a retry,
        /// which goes in 7/MDP's frames in case the broker answering now is not the one that said so.
        func envelope(brokerPacks: Bool) -> MDP.Envelope { brokerPacks && attemptsLeft == attempts - 1 ? .packed : .standard }

        /// The attempt's message.
        func message(brokerPacks: Bool) -> [Frame] {
            MDP.clientRequest(service: service, body: body, envelope: envelope(brokerPacks: brokerPacks))
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
        /// Whether the broker's last reply said it reads requests packed into one frame (`MDP.Envelope`).
        let brokerPacks = Atomic<Bool>(false)

        init(connection socket: sending Socket) throws {
            executor = LoopExecutor(waker: commands.waker)
            signalDescriptor = try socket.signalDescriptor
            connection = Mutex(socket)
        }

        func sendMultiplexed(_ pending: Pending) throws {
            let waiting = try connection.withLock { socket in
                try socket.send(message: pending.message(brokerPacks: brokerPacks.load(ordering: .relaxed)))
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
                    id: id, service: service, body: correlated ? RequestID.prefixed(body, id: id, trace: trace) : body,
                    correlated: correlated,
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
