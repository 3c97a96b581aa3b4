import Foundation
import Testing
import Wire
import ZeroMQ

@testable import Bus

/// `SequenceTracker`: what a sequence and an id say about what came before from the same source,
/// and that a forged event cannot steer it for long.
@Suite struct SequenceTrackerTests {
    /// Observations of `events` (sequence, id) from one source.
    static func observations(_ events: [(UInt64, String)], source: String = "orders", tracker: inout SequenceTracker)
        -> [SequenceObservation]
    {
        events.map { tracker.observe(source: source, sequence: $0.0, id: $0.1) }
    }

    static func observations(_ events: [(UInt64, String)]) -> [SequenceObservation] {
        var tracker = SequenceTracker()
        return observations(events, tracker: &tracker)
    }

    /// Sequences 1...n with ids "e1"..."en".
    static func run(_ range: ClosedRange<UInt64>) -> [(UInt64, String)] { range.map { ($0, "e\($0)") } }

    @Test func reportsFirstNextGapDuplicateAndRestart() {
        var tracker = SequenceTracker()
        #expect(tracker.observe(source: "orders", sequence: 5, id: "a") == .first)
        #expect(tracker.observe(source: "orders", sequence: 6, id: "b") == .next)
        #expect(tracker.observe(source: "orders", sequence: 9, id: "c") == .gap(SequenceGap(source: "orders", expected: 7, received: 9)))
        #expect(tracker.observe(source: "orders", sequence: 6, id: "b") == .duplicate(last: 9))
        #expect(tracker.observe(source: "trips", sequence: 1, id: "t") == .first)
        #expect(tracker.observe(source: "orders", sequence: 1, id: "x") == .restarted(last: 9))
        #expect(tracker.observe(source: "orders", sequence: 2, id: "y") == .next)
    }

    @Test func seededTrackerSeesWhatWasMissedWhileDown() {
        var tracker = SequenceTracker()
        tracker.expect(source: "orders", after: 100)
        #expect(
            tracker.observe(source: "orders", sequence: 104, id: "a") == .gap(SequenceGap(source: "orders", expected: 101, received: 104)))
        #expect(SequenceGap(source: "orders", expected: 101, received: 104).missing == 3)
    }

    /// A copy has the id seen at its sequence; another id there is a conflict, which leaves the
    /// tracker as it was — a forged event at `last + 1`, before or after the genuine one, cannot
    /// make the genuine one a duplicate.
    @Test func anotherIDAtASequenceSeenIsAConflictNotADuplicate() {
        #expect(Self.observations(Self.run(1...3) + [(3, "e3"), (3, "forged")]).suffix(2) == [.duplicate(last: 3), .conflict(last: 3)])
        // Forged first, genuine after: the genuine one is not taken for a copy.
        #expect(
            Self.observations(Self.run(1...3) + [(4, "forged"), (4, "e4"), (5, "e5")]).suffix(3) == [.next, .conflict(last: 4), .next])
        // A forged run ahead of the genuine one: each genuine event of it is a conflict still.
        let forgedRun: [(UInt64, String)] = [(4, "f4"), (5, "f5"), (6, "f6")]
        #expect(
            Self.observations(Self.run(1...3) + forgedRun + Self.run(4...6)).suffix(3) == Array(repeating: .conflict(last: 6), count: 3))
    }

    /// Through two bus instances each event comes twice: the late copy of the first event is a
    /// duplicate, not a restart; a source that really starts again still shows as one.
    @Test func aLateCopyOfTheFirstEventIsADuplicateAndARestartStillShows() {
        #expect(
            Self.observations([(1, "a"), (2, "b"), (3, "c"), (1, "a"), (2, "b")]) == [
                .first, .next, .next, .duplicate(last: 3), .duplicate(last: 3),
            ])
        var limits = SequenceTracker.Limits()
        limits.recentIDs = 2
        var tracker = SequenceTracker(limits: limits)
        let far = Self.observations(Self.run(1...50) + [(1, "e1")], tracker: &tracker)
        #expect(far.last == .duplicate(last: 50), "the first event's id is kept beyond the window")
        #expect(
            Self.observations([(1, "a"), (2, "b"), (1, "x"), (1, "x"), (2, "y")]) == [
                .first, .next, .restarted(last: 2), .duplicate(last: 1), .next,
            ])
    }

    /// A plain subscriber cannot ask the publisher: a jump stays unconfirmed, and the next event of
    /// the run before it resumes tracking there — a sequence of 2^62 does not make every genuine
    /// event after it a duplicate, and a forged sequence 1 makes no gap of the whole history.
    @Test func aForgedJumpOrRestartOfAPlainSourceIsLeftWhenTheGenuineRunGoesOn() {
        let farAhead = Self.observations(Self.run(1...5) + [(1 << 62, "forged"), (6, "e6"), (7, "e7")])
        #expect(farAhead.suffix(3) == [.gap(SequenceGap(source: "orders", expected: 6, received: 1 << 62)), .next, .next])
        let restart = Self.observations(Self.run(1...5) + [(1, "forged"), (6, "e6"), (7, "e7")])
        #expect(restart.suffix(3) == [.restarted(last: 5), .next, .next])
        // Again and again: each genuine event after a forged jump resumes.
        let repeated = Self.observations(Self.run(1...5) + [(1 << 62, "f1"), (6, "e6"), ((1 << 62) + 1, "f2"), (7, "e7"), (8, "e8")])
        #expect(repeated.suffix(3) == [.gap(SequenceGap(source: "orders", expected: 7, received: (1 << 62) + 1)), .next, .next])
    }

    /// Through two bus instances, one of which lost events: the other's copies of them resume
    /// tracking where the loss began, and what was seen already stays a duplicate.
    @Test func eventsOneInstanceLostComeThroughTheOtherOnce() {
        let twoPaths: [(UInt64, String)] = [(1, "e1"), (4, "e4"), (1, "e1"), (2, "e2"), (3, "e3"), (4, "e4"), (5, "e5")]
        #expect(
            Self.observations(twoPaths) == [
                .first, .gap(SequenceGap(source: "orders", expected: 2, received: 4)), .duplicate(last: 4), .next, .next,
                .duplicate(last: 4), .next,
            ])
    }

    /// A followed source (a reactor's, `expect`) is not resumed by guesswork: whatever at or below
    /// its last sequence is not a known copy is a conflict, for the reactor to settle with the log.
    @Test func aFollowedSourceReportsConflictsWhereAPlainOneReportsDuplicates() {
        var tracker = SequenceTracker()
        tracker.expect(source: "orders", after: 10)
        #expect(
            Self.observations([(11, "e11"), (1 << 62, "forged"), (12, "e12")], tracker: &tracker) == [
                .next, .gap(SequenceGap(source: "orders", expected: 12, received: 1 << 62)), .conflict(last: 1 << 62),
            ])
        tracker.expect(source: "orders", after: 11)  // the reactor refused the jump
        #expect(
            Self.observations([(12, "e12"), (13, "e13"), (13, "e13"), (5, "old")], tracker: &tracker) == [
                .next, .next, .duplicate(last: 13), .conflict(last: 13),
            ])
        var plain = SequenceTracker()
        #expect(Self.observations(Self.run(1...13) + [(5, "old")], tracker: &plain).last == .duplicate(last: 13))
    }

    /// Thousands of device sources: the least recently heard are forgotten past the limit, the
    /// ids kept per source are bounded, and a followed source is never forgotten.
    @Test func memoryIsBoundedAndFollowedSourcesAreKept() {
        var limits = SequenceTracker.Limits()
        (limits.sources, limits.recentIDs, limits.followedRecentIDs) = (100, 4, 64)
        var tracker = SequenceTracker(limits: limits)
        tracker.expect(source: "orders", after: 7)
        for device in 0..<1000 {
            for sequence in UInt64(1)...3 {
                _ = tracker.observe(source: "tracking/devices/\(device)", sequence: sequence, id: "\(device)-\(sequence)")
            }
        }
        #expect(tracker.sourceCount <= 100)
        #expect(tracker.lastSequence(of: "orders") == 7, "followed: kept")
        #expect(tracker.lastSequence(of: "tracking/devices/999") == 3 && tracker.lastSequence(of: "tracking/devices/0") == nil)
        // A forgotten device starts again as a first event, not a duplicate of nothing.
        #expect(tracker.observe(source: "tracking/devices/0", sequence: 4, id: "0-4") == .first)
        // Only the last few ids are kept: before them, another event cannot be told from a copy.
        var small = SequenceTracker(limits: limits)
        let window = Self.observations(Self.run(1...10) + [(7, "other"), (6, "other")], tracker: &small)
        #expect(window.suffix(2) == [.conflict(last: 10), .duplicate(last: 10)])
    }
}

/// `EventSubscriber` refuses an event whose source is not its topic's publisher before its
/// sequence is looked at.
@Suite struct SourceRuleTests {
    static let rule = EventSourceRule(publishers: [
        (topicPrefix: "order.", source: "orders"), (topicPrefix: "device.location.", source: "tracking"),
    ])

    static func frames(topic: String, source: String, sequence: UInt64) -> [Frame] {
        [
            Frame(frame: topic),
            EnvelopeWriter.write(id: EventID.next(), source: source, type: "t", time: Date(), sequence: sequence, data: Array("{}".utf8)),
        ]
    }

    @Test func anEventFromAnotherSourceIsMalformedAndTouchesNoSequence() {
        var tracker = SequenceTracker()
        let forged = EventSubscriber<JSONValue>.decode(
            Self.frames(topic: "order.status.COMPLETED", source: "evil", sequence: 1 << 62), tracker: &tracker, sourceRule: Self.rule)
        guard case .malformed(let problem) = forged else {
            Issue.record("a foreign source's event was delivered")
            return
        }
        #expect(problem.isForeignSource && problem.topic == "order.status.COMPLETED" && problem.reason.contains("evil"))
        #expect(tracker.sourceCount == 0, "its sequence never reached the tracker")
        for (topic, source) in [("order.status.NEW", "orders"), ("device.location.d1", "tracking/devices/d1"), ("ops.note", "anyone")] {
            guard
                case .event = EventSubscriber<JSONValue>.decode(
                    Self.frames(topic: topic, source: source, sequence: 1), tracker: &tracker, sourceRule: Self.rule)
            else {
                Issue.record("\(source) on \(topic) was refused")
                continue
            }
        }
        for (topic, source) in [
            ("order.status.NEW", "ordersX"), ("order.status.NEW", "orders-evil/x"), ("device.location.d1", "trackingX/devices/d1"),
        ] {
            let delivery = EventSubscriber<JSONValue>.decode(
                Self.frames(topic: topic, source: source, sequence: 1), tracker: &tracker, sourceRule: Self.rule)
            guard case .malformed = delivery else {
                Issue.record("\(source) on \(topic) was delivered")
                continue
            }
        }
        // Without a rule (a plain tool's subscriber), anything goes.
        guard
            case .event = EventSubscriber<JSONValue>.decode(
                Self.frames(topic: "order.x", source: "evil", sequence: 1), tracker: &tracker, sourceRule: nil)
        else {
            Issue.record("refused without a rule")
            return
        }
    }
}
