import Logging
import Synchronization

/// Passes on at most one warning or error per `interval` (what was held back is counted on the
/// next one); lower levels pass unchanged. For a source that repeats itself at every attempt —
/// the span exporter while its collector is unreachable — so the log stays readable.
struct RateLimitedLogHandler: LogHandler {
    /// Shared by the handler's copies (a `Logger` copies its handler with each metadata change).
    final class Gate: Sendable {
        let state = Mutex<(last: ContinuousClock.Instant?, held: Int)>((nil, 0))
    }

    var wrapped: any LogHandler
    let interval: Duration
    let gate = Gate()

    init(wrapping wrapped: any LogHandler, interval: Duration) {
        self.wrapped = wrapped
        self.interval = interval
    }

    var logLevel: Logger.Level {
        get { wrapped.logLevel }
        set { wrapped.logLevel = newValue }
    }

    var metadata: Logger.Metadata {
        get { wrapped.metadata }
        set { wrapped.metadata = newValue }
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { wrapped[metadataKey: key] }
        set { wrapped[metadataKey: key] = newValue }
    }

    func log(event: LogEvent) {
        guard event.level >= .warning else { return wrapped.log(event: event) }
        let now = ContinuousClock.now
        let interval = self.interval
        let held: Int? = gate.state.withLock { state in
            if let last = state.last, now - last < interval {
                state.held += 1
                return nil
            }
            defer { state = (now, 0) }
            return state.held
        }
        guard let held else { return }
        var event = event
        if held > 0 { event.metadata = (event.metadata ?? [:]).merging(["held_back": "\(held)"]) { _, new in new } }
        wrapped.log(event: event)
    }
}
