import Logging
import Synchronization
import ZeroMQ

/// Requests through whichever of several brokers answers: the request side of a bus with no single
/// point of failure (docs/design.md, "Two buses"). Every worker registers with every broker
/// (`ServiceWorker`), so any live broker reaches every service; a client only has to send through one.
///
/// The client sticks to one broker (the first, to begin with) and moves to the next when a probe
/// finds it silent. Every `probeInterval` it asks each broker `mmi.service`, which a broker answers
/// itself; one that does not answer within `probeTimeout` is down. Requests in flight on a broker
/// found down are sent again through the next one, as the Lazy Pirate resends after a timeout (ops
/// are safe to repeat). Requests therefore flow again about `probeInterval + probeTimeout` after a
/// broker's host dies, rather than after each request's own timeout. It does not move back when
/// the first broker returns: both serve every service, so there is nothing to gain by moving.
public final class BrokerFailover: Sendable {
    public struct Options: Sendable {
        public var probeInterval: Duration = .milliseconds(250)
        public var probeTimeout: Duration = .milliseconds(750)
        public init() {}
    }

    /// A request abandoned because its broker was found down (sent again through another).
    struct BrokerDown: Error {}

    struct State {
        var active = 0
        var down: [Bool]
        /// Requests in flight, each waiting to hear that its broker is down.
        var waiters: [UInt64: (broker: Int, continuation: CheckedContinuation<Void, Never>)] = [:]
        var nextWaiter: UInt64 = 0
        var closed = false

        /// A broker other than `broker` that is not down.
        func alternative(to broker: Int) -> Int? {
            (1..<down.count).lazy.map { (broker + $0) % down.count }.first { !down[$0] }
        }
    }

    /// One client per broker, in the order the bus address names them.
    public let clients: [MDPClient]
    private let state: Mutex<State>
    private let probing = Mutex<Task<Void, Never>?>(nil)
    private let moves = Atomic<Int>(0)
    private let logger: Logger

    /// Connects to every broker of `endpoints` and starts probing them.
    public init(endpoints: [String], options: MDPClient.Options = .init(), failover: Options = .init(), logger: Logger) async throws {
        var clients: [MDPClient] = []
        for endpoint in endpoints { clients.append(try await MDPClient(endpoint: endpoint, options: options, logger: logger)) }
        self.clients = clients
        self.logger = logger
        state = Mutex(State(down: Array(repeating: false, count: clients.count)))
        let probe = Task { [weak self] in
            while !Task.isCancelled, let self {
                await self.probeEach(timeout: failover.probeTimeout)
                try? await Task.sleep(for: failover.probeInterval)
            }
        }
        probing.withLock { $0 = probe }
    }

    /// The broker requests go through now.
    public var activeEndpoint: String { clients[state.withLock { $0.active }].endpoint }

    /// How many times requests moved to another broker because theirs fell silent.
    public var failovers: Int { moves.load(ordering: .relaxed) }

    /// Each broker, in the bus address's order, and whether its last probe was answered.
    public var brokers: [(endpoint: String, answering: Bool)] {
        let down = state.withLock { $0.down }
        return zip(clients, down).map { ($0.endpoint, !$1) }
    }

    /// Sends `body` to `service` through the active broker (see `MDPClient.request`), moving to
    /// another when that broker is found down. Throws `MDPClientError`.
    public func request(
        service: String, body: [Frame], correlated: Bool = false, timeout: Duration? = nil, attempts: Int? = nil, trace: TraceHeaders? = nil
    ) async throws -> [Frame] {
        let attempts = max(1, attempts ?? clients[0].options.attempts)
        var attempt = 0
        var moves = 0
        while true {
            let broker = state.withLock { $0.active }
            do {
                return try await send(through: broker) {
                    try await self.clients[broker].request(
                        service: service, body: body, correlated: correlated, timeout: timeout, attempts: 1, trace: trace)
                }
            } catch is BrokerDown {
                // Not counted as an attempt, but bounded: brokers found down in turn, faster than requests fail.
                moves += 1
                if moves > 2 * clients.count { throw MDPClientError.timeout(service: service, attempts: attempt + moves, milliseconds: 0) }
            } catch MDPClientError.timeout(_, _, let milliseconds) {
                attempt += 1
                if attempt >= attempts { throw MDPClientError.timeout(service: service, attempts: attempts, milliseconds: milliseconds) }
            }
        }
    }

    /// Runs `request` until it answers, or until `broker` is found down (`BrokerDown`).
    private func send(through broker: Int, _ request: @escaping @Sendable () async throws -> [Frame]) async throws -> [Frame] {
        try await withThrowingTaskGroup(of: [Frame]?.self) { group in
            group.addTask { try await request() }
            group.addTask {
                await self.waitUntilDown(broker)
                return nil
            }
            defer { group.cancelAll() }
            guard let reply = try await group.next() ?? nil else { throw BrokerDown() }
            return reply
        }
    }

    /// Returns once `broker` is found down while another is not, or when the task is cancelled.
    private func waitUntilDown(_ broker: Int) async {
        let id = state.withLock { state in
            state.nextWaiter += 1
            return state.nextWaiter
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let now = state.withLock { state -> Bool in
                    // Cancellation is flagged before its handler runs: checked here, under the lock, no wake-up is missed.
                    if state.closed || Task.isCancelled || (state.down[broker] && state.alternative(to: broker) != nil) { return true }
                    state.waiters[id] = (broker, continuation)
                    return false
                }
                if now { continuation.resume() }
            }
        } onCancel: {
            state.withLock { $0.waiters.removeValue(forKey: id) }?.continuation.resume()
        }
    }

    /// Asks each broker `mmi.service` once and records which answered.
    private func probeEach(timeout: Duration) async {
        await withTaskGroup(of: (Int, Bool).self) { group in
            for (index, client) in clients.enumerated() {
                group.addTask {
                    let reply = try? await client.request(
                        service: "mmi.service", body: [Frame(frame: "mmi.service")], timeout: timeout, attempts: 1)
                    return (index, reply != nil)
                }
            }
            for await (broker, answered) in group { observe(broker, answered: answered) }
        }
    }

    /// Records a probe's outcome; when the active broker is down, requests move to one that is not.
    func observe(_ broker: Int, answered: Bool) {
        var moved: (from: Int, to: Int)?
        var changed = false
        let abandoned = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            guard state.down[broker] == answered else { return [] }
            state.down[broker] = !answered
            changed = true
            let from = state.active
            if state.down[from], let next = state.alternative(to: from) {
                state.active = next
                moved = (from, next)
            }
            // Requests waiting on a broker that is down go through the active one, if it is up.
            guard !state.down[state.active] else { return [] }
            let stranded = state.waiters.filter { state.down[$0.value.broker] }
            for id in stranded.keys { state.waiters[id] = nil }
            return stranded.values.map(\.continuation)
        }
        if let moved {
            moves.add(1, ordering: .relaxed)
            logger.warning(
                "broker silent; requests go through another",
                metadata: [
                    "silent": "\(clients[moved.from].endpoint)", "now": "\(clients[moved.to].endpoint)", "resent": "\(abandoned.count)",
                ])
        } else if changed {
            logger.log(
                level: answered ? .info : .warning, answered ? "broker answers again" : "broker silent",
                metadata: ["broker": "\(clients[broker].endpoint)"])
        }
        for continuation in abandoned { continuation.resume() }
    }

    /// Stops probing, fails what is still waiting with `.closed` and closes every socket.
    public func close() async {
        probing.withLock { $0 }?.cancel()
        let waiting = state.withLock { state in
            state.closed = true
            defer { state.waiters = [:] }
            return state.waiters.values.map(\.continuation)
        }
        for continuation in waiting { continuation.resume() }
        for client in clients { await client.close() }
    }
}
