/// What an event's `sequence` says about what came before it from the same source.
public enum SequenceObservation: Equatable, Sendable {
    /// The first event seen from this source (nothing to compare with).
    case first
    /// Exactly the next one.
    case next
    /// Events `expected ..< received` never arrived: ask the source for them (`events` op).
    case gap(SequenceGap)
    /// Already seen (a replay, or a duplicate): safe to ignore.
    case duplicate(last: UInt64)
    /// The source started again from 1 (a publisher without durable sequence restarted).
    case restarted(last: UInt64)
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

/// The last sequence applied per source — the Clone pattern's bookkeeping (12/CHP).
///
/// A consumer that persists what it applied seeds the tracker with `expect(source:after:)` after a
/// restart, so the first event it sees tells it whether it missed some while it was down.
public struct SequenceTracker: Sendable {
    public private(set) var lastSequence: [String: UInt64] = [:]

    public init() {}

    public mutating func expect(source: String, after sequence: UInt64) {
        lastSequence[source] = sequence
    }

    public mutating func observe(source: String, sequence: UInt64) -> SequenceObservation {
        guard let last = lastSequence[source] else {
            lastSequence[source] = sequence
            return .first
        }
        if sequence == last &+ 1 {
            lastSequence[source] = sequence
            return .next
        }
        if sequence > last {
            lastSequence[source] = sequence
            return .gap(SequenceGap(source: source, expected: last + 1, received: sequence))
        }
        if sequence == 1 && last > 1 {
            lastSequence[source] = sequence
            return .restarted(last: last)
        }
        return .duplicate(last: last)
    }
}
