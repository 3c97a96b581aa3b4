import BusModel
import Logging
import PostgresNIO
import Synchronization

/// A primary and its standbys (`postgres://…@a,b/db?target_session_attrs=read-write`): the
/// schema uses the host that takes writes, and when it is lost or becomes a standby, the probe
/// finds the one promoted in its place and the pool moves there — as libpq's host list does,
/// without a proxy in between.
extension PostgresSchema {
    /// At start: the first host that answers and, with `read-write`, takes writes; waits up to
    /// `timeout` for one (in compose, the servers may start after us).
    func useWritableHost(_ configurations: [PostgresConnection.Configuration], within timeout: Duration) async throws {
        let deadline = ContinuousClock.now + timeout
        var announced = false
        while true {
            if let host = await writableHost(configurations, excluding: nil) {
                if host != pool.withLock({ $0.host }) { use(host: host, because: "the first host listed takes no writes") }
                return
            }
            guard ContinuousClock.now < deadline else {
                throw ServiceError(
                    status: Status.unavailable, code: "storage_unavailable",
                    message: "no host of \(url) \(url.targetSessionAttrs == .readWrite ? "takes writes" : "answers") within \(timeout)")
            }
            if !announced {
                logger.warning("no database host to use yet; waiting", metadata: ["database": "\(url)"])
                announced = true
            }
            try await Task.sleep(for: .milliseconds(500))
        }
    }

    /// The first host, but `excluding`, that answers and (with `read-write`) takes writes.
    func writableHost(_ configurations: [PostgresConnection.Configuration], excluding: Int?) async -> Int? {
        for host in configurations.indices where host != excluding {
            let outcome = await Self.probe(nil, configuration: configurations[host], within: .seconds(3), logger: logger)
            try? await outcome.connection?.close()
            if outcome.answered, outcome.writable || url.targetSessionAttrs == .any { return host }
        }
        return nil
    }

    /// Moves the pool to `url.hosts[host]`: calls under way on the old pool fail (503: nothing is
    /// known stored, the caller tries again), the next ones go to the new host.
    func use(host: Int, because reason: String) {
        let client = Self.client(url: url, host: host, schema: schema, maximumConnections: maximumConnections, logger: logger)
        let running = Task { await client.run() }
        let previous = pool.withLock { pool in
            defer { pool = Pool(client: client, running: running, host: host) }
            return pool
        }
        previous.running.cancel()
        previous.calls.abandonAll()
        let name = { [url] (index: Int) in "\(url.hosts[index].name):\(url.hosts[index].port)" }
        logger.notice(
            "database: using another host",
            metadata: ["host": "\(name(host))", "previous": "\(name(previous.host))", "reason": "\(reason)"])
    }
}

/// The calls under way on one pool: when it is replaced, each is answered at once (`unanswered`:
/// its change may have been stored) instead of waiting for a connection that will not come.
public final class AbandonedCalls: Sendable {
    private let state = Mutex<(next: Int, calls: [Int: @Sendable () -> Void], abandoned: Bool)>((0, [:], false))

    /// `abandon` runs if the pool is replaced before `forget`; at once if it already was.
    func register(_ abandon: @escaping @Sendable () -> Void) -> Int {
        let (id, now) = state.withLock { state -> (Int, Bool) in
            state.next += 1
            if !state.abandoned { state.calls[state.next] = abandon }
            return (state.next, state.abandoned)
        }
        if now { abandon() }
        return id
    }

    func forget(_ id: Int) { _ = state.withLock { $0.calls.removeValue(forKey: id) } }

    func abandonAll() {
        let calls = state.withLock { state in
            state.abandoned = true
            defer { state.calls = [:] }
            return Array(state.calls.values)
        }
        for abandon in calls { abandon() }
    }
}
