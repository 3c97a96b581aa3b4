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
            "no reply from service '\(service)' after \(attempts) attempt\(attempts == 1 ? "" : "s") of \(ms) ms (is a worker running? try `ridectl status`)"
        case .invalidReply(let why): "invalid reply from the broker: \(why)"
        case .closed: "the client is closed"
        case .cancelled: "the request was cancelled"
        }
    }
}

/// A 7/MDP client: sends `[service][body]` through the broker and awaits the reply.
///
/// MDP/0.1 has no request ids, so replies are matched by socket: the client keeps a pool of DEALER
/// "lanes", each with at most one request in flight, all owned by one thread. Up to `maxLanes`
/// requests run concurrently; more wait their turn. A request that times out is retried on a fresh
/// socket (the Lazy Pirate pattern: a late reply to the old socket can never be taken for the reply
/// to a newer request).
public final class MDPClient: Sendable {
    public struct Options: Sendable {
        /// How long one attempt waits for its reply.
        public var timeout: Duration = .milliseconds(2500)
        /// Attempts per request, the first included.
        public var attempts = 3
        /// Requests in flight at once.
        public var maxLanes = 64
        public init() {}
    }

    struct Pending: Sendable {
        let id: UInt64
        let service: String
        let body: [Frame]
        let timeout: Int64
        var attemptsLeft: Int
        let attempts: Int
        let continuation: CheckedContinuation<[Frame], any Error>
    }

    enum Command: Sendable {
        case request(Pending)
        case cancel(UInt64)
    }

    final class Shared: Sendable {
        let commands = Mailbox<Command>()
        let stopRequested = Atomic<Bool>(false)
        let nextID = Atomic<UInt64>(1)
    }

    public let options: Options
    public let endpoint: String
    private let shared = Shared()
    private let thread: OwnedThread

    /// Connects to the broker at `endpoint` (`RIDE_BROKER`). Lanes connect lazily, as requests need them.
    public init(endpoint: String, options: Options = .init(), logger: Logger) async throws {
        self.options = options
        self.endpoint = endpoint
        let shared = self.shared
        (thread, _) = try await OwnedThread.start(name: "mdp-client") { ready in
            // Check the endpoint once up front, so a malformed one fails here rather than per request.
            do {
                let probe = try Socket(.dealer)
                try probe.connect(endpoint)
                probe.close()
                ready(.success(()))
            } catch {
                ready(.failure(error))
                return
            }
            var loop = ClientLoop(endpoint: endpoint, options: options, shared: shared, logger: logger)
            loop.run()
        }
    }

    /// Sends `body` to `service` and returns the reply body. Throws `MDPClientError`.
    public func request(service: String, body: [Frame], timeout: Duration? = nil, attempts: Int? = nil) async throws -> [Frame] {
        let id = shared.nextID.add(1, ordering: .relaxed).oldValue
        let timeoutMs = (timeout ?? options.timeout).milliseconds
        let attempts = max(1, attempts ?? options.attempts)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                guard !shared.stopRequested.load(ordering: .relaxed) else {
                    continuation.resume(throwing: MDPClientError.closed)
                    return
                }
                shared.commands.post(.request(Pending(
                    id: id, service: service, body: body, timeout: timeoutMs,
                    attemptsLeft: attempts, attempts: attempts, continuation: continuation)))
            }
        } onCancel: {
            shared.commands.post(.cancel(id))
        }
    }

    /// Fails what is still waiting with `.closed` and closes every socket.
    public func close() async {
        shared.stopRequested.store(true, ordering: .sequentiallyConsistent)
        shared.commands.waker.wake()
        await thread.join()
    }
}

/// The client's thread: lanes, the waiting line, deadlines.
private struct ClientLoop {
    final class Lane {
        var socket: Socket
        var current: MDPClient.Pending?
        var deadline: Int64 = .max
        init(socket: Socket) { self.socket = socket }
    }

    let endpoint: String
    let options: MDPClient.Options
    let shared: MDPClient.Shared
    let logger: Logger
    var lanes: [Lane] = []
    var waiting = Deque<MDPClient.Pending>()
    /// Cancels that arrived before their request (a task cancelled while posting).
    var earlyCancels = Set<UInt64>()
    var poller = Poller()
    var pollerIsStale = true

    init(endpoint: String, options: MDPClient.Options, shared: MDPClient.Shared, logger: Logger) {
        self.endpoint = endpoint
        self.options = options
        self.shared = shared
        self.logger = logger
    }

    mutating func run() {
        while !shared.stopRequested.load(ordering: .relaxed) {
            if pollerIsStale { rebuildPoller() }
            let now = MonotonicClock.milliseconds()
            let nearest = lanes.lazy.map(\.deadline).min() ?? .max
            let timeout = nearest == .max ? 1000 : Int(max(0, min(1000, nearest - now)))
            do {
                try poller.poll(timeoutMilliseconds: timeout)
            } catch {
                logger.error("client poll failed", metadata: ["error": "\(error)"])
                break
            }
            for command in shared.commands.take() { handle(command) }
            for lane in lanes where lane.current != nil {
                receiveReplies(on: lane)
            }
            let later = MonotonicClock.milliseconds()
            for lane in lanes where lane.current != nil && lane.deadline <= later {
                expire(lane, now: later)
            }
            startWaiting()
        }
        for lane in lanes {
            lane.current?.continuation.resume(throwing: MDPClientError.closed)
            lane.socket.close()
        }
        while let pending = waiting.popFirst() { pending.continuation.resume(throwing: MDPClientError.closed) }
        for command in shared.commands.take() {
            if case .request(let pending) = command { pending.continuation.resume(throwing: MDPClientError.closed) }
        }
    }

    mutating func rebuildPoller() {
        poller.removeAll()
        poller.add(fileDescriptor: shared.commands.waker.fileDescriptor)
        for lane in lanes { poller.add(lane.socket) }
        pollerIsStale = false
    }

    mutating func handle(_ command: MDPClient.Command) {
        switch command {
        case .request(let pending):
            if earlyCancels.remove(pending.id) != nil {
                pending.continuation.resume(throwing: MDPClientError.cancelled)
            } else {
                waiting.append(pending)
            }
        case .cancel(let id):
            if let index = waiting.firstIndex(where: { $0.id == id }) {
                waiting.remove(at: index).continuation.resume(throwing: MDPClientError.cancelled)
            } else if let lane = lanes.first(where: { $0.current?.id == id }) {
                lane.current!.continuation.resume(throwing: MDPClientError.cancelled)
                lane.current = nil
                lane.deadline = .max
                replaceSocket(of: lane)
            } else if earlyCancels.count < 10_000 {
                earlyCancels.insert(id)
            }
        }
    }

    /// Gives waiting requests to idle lanes, opening lanes up to `maxLanes`.
    mutating func startWaiting() {
        while !waiting.isEmpty {
            var lane = lanes.first(where: { $0.current == nil })
            if lane == nil, lanes.count < options.maxLanes, let socket = makeSocket() {
                lane = Lane(socket: socket)
                lanes.append(lane!)
                pollerIsStale = true
            }
            guard let idle = lane else { return }
            send(waiting.removeFirst(), on: idle)
        }
    }

    mutating func send(_ pending: MDPClient.Pending, on lane: Lane) {
        var pending = pending
        pending.attemptsLeft -= 1
        lane.current = pending
        lane.deadline = MonotonicClock.milliseconds() + pending.timeout
        do {
            try lane.socket.send(message: MDP.clientRequest(service: pending.service, body: pending.body), dontWait: true)
        } catch {
            // Counted as a lost attempt: the deadline retries it on a fresh socket.
            logger.warning("request send failed", metadata: ["service": "\(pending.service)", "error": "\(error)"])
        }
    }

    mutating func receiveReplies(on lane: Lane) {
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
                lane.current = nil
                lane.deadline = .max
                pending.continuation.resume(returning: body)
            } catch {
                lane.current = nil
                lane.deadline = .max
                pending.continuation.resume(throwing: MDPClientError.invalidReply(error.description))
            }
        }
    }

    mutating func expire(_ lane: Lane, now: Int64) {
        guard let pending = lane.current else { return }
        replaceSocket(of: lane)
        if pending.attemptsLeft > 0 {
            logger.debug("request timed out, retrying", metadata: ["service": "\(pending.service)", "attempts_left": "\(pending.attemptsLeft)"])
            send(pending, on: lane)
        } else {
            lane.current = nil
            lane.deadline = .max
            pending.continuation.resume(throwing: MDPClientError.timeout(service: pending.service, attempts: pending.attempts, milliseconds: pending.timeout))
        }
    }

    /// A fresh socket (new routing id) for a lane whose request was abandoned, so a late reply to the
    /// old one is never mistaken for the reply to the next request.
    mutating func replaceSocket(of lane: Lane) {
        guard let socket = makeSocket() else { return }
        lane.socket.close()
        lane.socket = socket
        pollerIsStale = true
    }

    func makeSocket() -> Socket? {
        do {
            let socket = try Socket(.dealer)
            try socket.setReconnectInterval(milliseconds: 100, maxMilliseconds: 2000)
            try socket.connect(endpoint)
            return socket
        } catch {
            logger.error("cannot open a client socket", metadata: ["endpoint": "\(endpoint)", "error": "\(error)"])
            return nil
        }
    }
}
