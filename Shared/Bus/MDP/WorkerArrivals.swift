/// Turns the broker's one-notice-per-worker-connection into one line per service: a service
/// instance opens `concurrency` connections (32 by default) at once, and an operator wants to read
/// "orders ready: 32 workers", not 32 lines. A service's line is due once no worker of it has
/// arrived for `quiet` milliseconds; a later arrival (another instance, a reconnect) makes another.
public struct WorkerArrivals: Sendable {
    public let quiet: Int64
    private var pending: [String: Int64] = [:]  // service → when its line is due

    public init(quiet: Int64 = 300) { self.quiet = quiet }

    public mutating func arrived(service: String, now: Int64) { pending[service] = now + quiet }

    /// The services whose arrivals have settled by `now`, in name order; each is reported once.
    public mutating func settled(now: Int64) -> [String] {
        let due = pending.filter { $0.value <= now }.keys.sorted()
        for service in due { pending[service] = nil }
        return due
    }
}
