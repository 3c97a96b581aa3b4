import Logging
import Synchronization

/// Refused credentials (tokens at the gateway, device credentials at tracking's ingest), logged at
/// most once per source (a client address, a device) and interval: a client retrying a bad
/// credential, or someone trying many, cannot fill the logs. Nothing else is kept.
public final class RejectionLog: Sendable {
    private struct Window {
        var since: ContinuousClock.Instant
        var refused: Int
    }
    private let windows = Mutex<[String: Window]>([:])
    /// The log line's message, e.g. `token refused`.
    public let message: Logger.Message
    public let interval: Duration
    public let capacity: Int

    public init(_ message: Logger.Message = "token refused", interval: Duration = .seconds(60), capacity: Int = 10_000) {
        self.message = message
        self.interval = interval
        self.capacity = capacity
    }

    /// Counts a refusal from `peer`; logs it when it is the first of its interval (with how many the last interval held).
    /// `what`: the log line's message for this refusal, when not the log's own.
    public func note(_ reason: String, from peer: String, logger: Logger, what: Logger.Message? = nil, now: ContinuousClock.Instant = .now)
    {
        let earlier = windows.withLock { windows -> Int? in
            if var window = windows[peer], now - window.since < interval {
                window.refused += 1
                windows[peer] = window
                return nil
            }
            // Bounded: forgetting every window costs at most one extra line per client.
            if windows.count >= capacity { windows.removeAll(keepingCapacity: true) }
            let previous = windows[peer]?.refused ?? 0
            windows[peer] = Window(since: now, refused: 1)
            return previous
        }
        guard let earlier else { return }
        logger.warning(
            what ?? message, metadata: ["reason": "\(reason)", "peer": "\(peer)", "refused_in_previous_interval": "\(earlier)"])
    }

    /// Whether a refusal from `peer` now would be logged (tests).
    public func wouldLog(from peer: String, now: ContinuousClock.Instant = .now) -> Bool {
        windows.withLock { windows in windows[peer].map { now - $0.since >= interval } ?? true }
    }
}
