import Logging
import Synchronization

/// The database calls of one service under way: where each was made, since when, and whether it
/// has its connection yet. A call that takes far longer than any statement should (the pool
/// waiting for a server that came back, a query on a connection that will never answer) is
/// logged with its place in the code — the difference between "rides stopped" and knowing why.
final class StorageCalls: Sendable {
    struct Call: Sendable {
        var site: String
        var since: ContinuousClock.Instant
        var leased = false
    }

    /// How long a call runs before it is reported, and how often the report is repeated.
    static let slow = Duration.seconds(10)

    private struct State {
        var next = 0
        var open: [Int: Call] = [:]
        var lastReport: ContinuousClock.Instant?
    }
    private let state = Mutex(State())

    func begin(site: String) -> Int {
        state.withLock { state in
            state.next += 1
            state.open[state.next] = Call(site: site, since: .now)
            return state.next
        }
    }

    func leased(_ id: Int) { state.withLock { $0.open[id]?.leased = true } }

    func end(_ id: Int) { _ = state.withLock { $0.open.removeValue(forKey: id) } }

    /// The calls older than `slow`, grouped by place and phase, oldest first.
    func slowCalls(now: ContinuousClock.Instant = .now) -> [(site: String, leased: Bool, count: Int, oldest: Duration)] {
        let old = state.withLock { $0.open.values.filter { now - $0.since >= Self.slow } }
        let groups = Dictionary(grouping: old) { "\($0.site)|\($0.leased)" }
        return groups.values.map { calls in
            (calls[0].site, calls[0].leased, calls.count, calls.map { now - $0.since }.max()!)
        }.sorted { $0.oldest > $1.oldest }
    }

    /// Logs the slow calls, at most once every `slow`.
    func reportSlow(logger: Logger, now: ContinuousClock.Instant = .now) {
        let due = state.withLock { state -> Bool in
            if let last = state.lastReport, now - last < Self.slow { return false }
            state.lastReport = now
            return true
        }
        guard due else { return }
        for group in slowCalls(now: now) {
            logger.warning(
                "database calls running long",
                metadata: [
                    "at": "\(group.site)", "calls": "\(group.count)", "oldest_s": "\(group.oldest.components.seconds)",
                    "waiting_for": "\(group.leased ? "the server's answer" : "a connection of the pool")",
                ])
        }
    }
}
