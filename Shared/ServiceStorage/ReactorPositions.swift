import Bus

/// Where a reactor stands with each source, by its own reckoning rather than the subscriber's: the
/// subscriber's tracker sees every event on the bus, forged ones too, while these positions move
/// only with events the reactor took — the next one in order, or what the publisher's log said —
/// and never with one it refused. What to do with each event (`step`) follows from them.
struct ReactorPositions: Sendable {
    struct Position: Sendable, Equatable {
        /// The last sequence taken, from the bus or the log.
        var known: UInt64
        /// Every sequence up to this one was handled as the publisher's log has it.
        var verified: UInt64
        /// The last event read from the log (a restart claim is checked against it).
        var lastRead: LogMark?
        /// Bumped whenever `known` goes back; handlers started before report under the old one.
        var epoch = 0
    }

    /// One event of a publisher's log: its sequence and id.
    struct LogMark: Sendable, Equatable {
        var sequence: UInt64
        var id: String
    }

    /// What to do with one event from the bus.
    enum Step: Equatable, Sendable {
        /// A copy, or at a sequence whose log version was handled already.
        case skip
        /// The next one: handle it (as the log has it, if the reactor verifies its kind).
        case take
        /// A jump: read the log after `after` through this event's sequence; refuse it if the log ends before.
        case fill(after: UInt64)
        /// At or below `known`, and not a copy: read the log's event at that sequence.
        case checkConflict
        /// Sequence 1 with a new id: does the log really start over?
        case checkRestart
    }

    private(set) var positions: [String: Position] = [:]

    subscript(source: String) -> Position? { positions[source] }

    /// After catching up through the log up to `sequence`.
    mutating func start(_ source: String, at sequence: UInt64, lastRead: LogMark?) {
        positions[source] = Position(known: sequence, verified: sequence, lastRead: lastRead)
    }

    func step(_ source: String, sequence: UInt64, observation: SequenceObservation) -> Step {
        guard let position = positions[source] else { return .take }
        if case .duplicate = observation { return .skip }
        if position.known < .max, sequence == position.known + 1 { return .take }
        if sequence > position.known { return .fill(after: position.known) }
        if case .restarted = observation { return .checkRestart }
        if sequence <= position.verified { return .skip }
        return .checkConflict
    }

    mutating func took(_ source: String, _ sequence: UInt64) {
        if let known = positions[source]?.known, sequence > known { positions[source]?.known = sequence }
    }

    /// The log was read after `after` through `through` (`last`: its last event read) and all of it handled.
    mutating func read(_ source: String, after: UInt64, through: UInt64, last: LogMark?) {
        guard var position = positions[source] else { return }
        position.known = max(position.known, through)
        if after <= position.verified { position.verified = max(position.verified, through) }
        if let last { position.lastRead = last }
        positions[source] = position
    }

    /// Back to `sequence`: what was taken beyond it was not the publisher's (or is in doubt).
    /// Returns the new epoch when `known` went back.
    @discardableResult
    mutating func setBack(_ source: String, to sequence: UInt64) -> Int? {
        guard var position = positions[source], position.known > sequence else { return nil }
        position.known = sequence
        position.verified = min(position.verified, sequence)
        position.epoch += 1
        positions[source] = position
        return position.epoch
    }

    /// The source's log started over: nothing of it is known any more.
    mutating func restart(_ source: String) -> Int {
        let epoch = (positions[source]?.epoch ?? 0) + 1
        positions[source] = Position(known: 0, verified: 0, lastRead: nil, epoch: epoch)
        return epoch
    }
}
