/// What an event's `sequence` and `id` say about what came before it from the same source.
public enum SequenceObservation: Equatable, Sendable {
    /// The first event seen from this source (nothing to compare with).
    case first
    /// Exactly the next one.
    case next
    /// Events `expected ..< received` never arrived: ask the source for them (`events` op).
    case gap(SequenceGap)
    /// The event seen already: the same id at that sequence (a copy through a second bus instance,
    /// a relay's repeat), or — of a source nobody follows — one too old to tell. Safe to ignore.
    case duplicate(last: UInt64)
    /// The source started again from 1 with a new event (a publisher without durable sequence restarted).
    case restarted(last: UInt64)
    /// At or below the last sequence but not a copy of what was seen there: another id at that
    /// sequence, or, of a followed source (`SequenceTracker.expect`), none remembered. One of the
    /// two is not the publisher's, or this one came late; only the publisher's log can tell
    /// (`EventReactor` asks it). The tracker is left as it was.
    case conflict(last: UInt64)
}

/// A run of events a subscriber missed.
public struct SequenceGap: Equatable, Sendable, CustomStringConvertible {
    public let source: String
    /// The first missing sequence.
    public let expected: UInt64
    /// The sequence that arrived instead.
    public let received: UInt64

    public init(source: String, expected: UInt64, received: UInt64) {
        self.source = source
        self.expected = expected
        self.received = received
    }

    public var missing: UInt64 { received - expected }

    public var description: String {
        "source \(source): expected sequence \(expected), received \(received) (\(missing) missed)"
    }
}
