import Logging
import Synchronization

/// Events a process refused, by reason: counted (`ride_events_refused_total`, copied when
/// Prometheus scrapes) and, through `note`, logged at most once per reason, source and minute, so a
/// flood of forged events cannot fill the logs. One per process (`shared`); tests make their own.
public final class RefusedEvents: Sendable {
    public enum Reason: String, Sendable, CaseIterable {
        /// Not a valid event: its frames, JSON or CloudEvents attributes.
        case malformed
        /// Its source is not its topic's publisher (`EventSourceRule`).
        case source
        /// A sequence beyond the newest in its publisher's log.
        case farAhead = "far_ahead"
        /// Not the event its publisher's log has at its sequence.
        case conflict
        /// A claim that its source started again from 1 while the source's log goes on.
        case restart
    }

    public static let shared = RefusedEvents()

    private let counts = Mutex<[Reason: UInt64]>([:])
    private let log = RejectionLog("event refused", interval: .seconds(60), capacity: 1000)

    public init() {}

    /// Counts one refusal.
    public func count(_ reason: Reason) {
        counts.withLock { $0[reason, default: 0] += 1 }
    }

    /// Counts one refusal and logs it when it is the first of its interval for `reason` and `source`.
    public func note(_ reason: Reason, source: String, _ detail: String, logger: Logger) {
        count(reason)
        log.note("\(reason.rawValue): \(detail)", from: "\(reason.rawValue) \(source.prefix(200))", logger: logger)
    }

    /// How many were refused for `reason` so far.
    public func total(_ reason: Reason) -> UInt64 { counts.withLock { $0[reason] ?? 0 } }
}
