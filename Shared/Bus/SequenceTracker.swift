/// The last sequence seen per source, and the ids of the last few — the Clone pattern's
/// bookkeeping (12/CHP), made so that a forged event cannot steer it for long.
///
/// Ids tell a copy (the same id again: `.duplicate`) from a conflict (another id at a sequence
/// already seen). A source is *followed* once a consumer that can ask the publisher's log says where
/// it stands (`expect(source:after:)`, `EventReactor`): it keeps more ids, is never forgotten, and
/// whatever at or below its last sequence is not a known copy is a conflict for the consumer to
/// check. Of other sources (a plain subscriber's, thousands of devices') little is kept, the least
/// recently heard are forgotten past `Limits.sources`, and a jump (a gap, a restart) stays
/// unconfirmed: the next event of the run before it (`last + 1` of that run) means the jump was not
/// the publisher's, and tracking resumes there instead of judging the rest duplicates.
public struct SequenceTracker: Sendable {
    public struct Limits: Sendable {
        /// Ids remembered per source.
        public var recentIDs = 8
        /// Ids remembered per followed source: a reactor's few sources, whose copies from a second
        /// bus instance may lag further behind (16 bytes each).
        public var followedRecentIDs = 4096
        /// Sources remembered; past it the least recently heard quarter of those not followed is forgotten.
        public var sources = 100_000
        public init() {}
    }

    public let limits: Limits
    private var states: [String: SourceState] = [:]
    private var tick: UInt64 = 0

    public init(limits: Limits = .init()) { self.limits = limits }

    /// The last sequence seen (or expected) from `source`.
    public func lastSequence(of source: String) -> UInt64? { states[source]?.last }

    /// How many sources are remembered.
    public var sourceCount: Int { states.count }

    /// Follows `source` from `sequence` on: the last one applied (after a restart), or where a
    /// consumer set it back after refusing what was beyond it. Ids above it are forgotten.
    public mutating func expect(source: String, after sequence: UInt64) {
        if states[source] == nil {
            makeRoom()
            states[source] = SourceState(last: sequence, followed: true, recent: RecentIDs(capacity: limits.followedRecentIDs), heard: tick)
        } else {
            states[source]?.follow(from: sequence, window: limits.followedRecentIDs)
        }
    }

    public mutating func observe(source: String, sequence: UInt64, id: String) -> SequenceObservation {
        tick &+= 1
        let fingerprint = id.hashValue  // SipHash with the process's random seed: not forgeable from outside
        if let observation = states[source]?.observe(source, sequence, fingerprint, tick: tick) { return observation }
        makeRoom()
        var state = SourceState(last: sequence, firstID: fingerprint, recent: RecentIDs(capacity: limits.recentIDs), heard: tick)
        state.recent.remember(sequence, fingerprint)
        states[source] = state
        return .first
    }

    /// Forgets the least recently heard quarter of the sources not followed when full.
    private mutating func makeRoom() {
        guard states.count >= limits.sources else { return }
        let unfollowed = states.filter { !$0.value.followed }.map { (source: $0.key, heard: $0.value.heard) }
        for stale in unfollowed.sorted(by: { $0.heard < $1.heard }).prefix(max(1, limits.sources / 4)) { states[stale.source] = nil }
    }
}

/// One source as `SequenceTracker` keeps it.
struct SourceState: Sendable {
    var last: UInt64
    var followed = false
    /// Of a source not followed: the last sequence before a jump no later event has continued from.
    var resumeAfter: UInt64?
    /// The id of the event that began this run (`.first`, `.restarted`): its late copy is a duplicate, not a restart.
    var firstID: Int?
    var recent: RecentIDs
    /// When it was last heard from (the tracker's count of observations).
    var heard: UInt64

    mutating func observe(_ source: String, _ sequence: UInt64, _ id: Int, tick: UInt64) -> SequenceObservation {
        heard = tick
        if last < .max, sequence == last + 1 {
            // Seen already when tracking resumed below it (a copy through another bus instance).
            if recent.id(at: sequence) == id {
                last = sequence
                return .duplicate(last: sequence)
            }
            last = sequence
            recent.remember(sequence, id)
            return .next
        }
        if !followed, let resume = resumeAfter, sequence == resume &+ 1, recent.id(at: sequence) == nil {
            // The run before the jump goes on: the jump was not the publisher's.
            resumeAfter = nil
            last = sequence
            recent.remember(sequence, id)
            return .next
        }
        if sequence > last {
            let before = last
            if !followed, resumeAfter == nil { resumeAfter = before }
            last = sequence
            recent.remember(sequence, id)
            return .gap(SequenceGap(source: source, expected: before + 1, received: sequence))
        }
        if sequence == 1, last > 1, firstID != id, recent.id(at: 1) != id {
            let before = last
            if !followed, resumeAfter == nil { resumeAfter = before }
            (last, firstID) = (1, id)
            recent.forget(above: 0)
            recent.remember(1, id)
            return .restarted(last: before)
        }
        if let seen = recent.id(at: sequence) { return seen == id ? .duplicate(last: last) : .conflict(last: last) }
        if sequence == 1, firstID == id { return .duplicate(last: last) }
        return followed ? .conflict(last: last) : .duplicate(last: last)
    }

    mutating func follow(from sequence: UInt64, window: Int) {
        (last, followed, resumeAfter) = (sequence, true, nil)
        if recent.capacity < window { recent = recent.resized(to: window) }
        recent.forget(above: sequence)
    }
}

/// The ids of a source's last few sequences, as fingerprints in a ring indexed by sequence.
struct RecentIDs: Sendable {
    private struct Slot: Sendable {
        /// 0: empty (a sequence 0 is never remembered).
        var sequence: UInt64 = 0
        var id = 0
    }

    private var slots: [Slot]

    init(capacity: Int) { slots = Array(repeating: Slot(), count: max(1, capacity)) }

    var capacity: Int { slots.count }

    func id(at sequence: UInt64) -> Int? {
        let slot = slots[index(sequence)]
        return slot.sequence == sequence && sequence != 0 ? slot.id : nil
    }

    mutating func remember(_ sequence: UInt64, _ id: Int) { slots[index(sequence)] = Slot(sequence: sequence, id: id) }

    mutating func forget(above sequence: UInt64) {
        for index in slots.indices where slots[index].sequence > sequence { slots[index] = Slot() }
    }

    func resized(to capacity: Int) -> RecentIDs {
        var resized = RecentIDs(capacity: capacity)
        for slot in slots where slot.sequence != 0 { resized.remember(slot.sequence, slot.id) }
        return resized
    }

    private func index(_ sequence: UInt64) -> Int { Int(sequence % UInt64(slots.count)) }
}
