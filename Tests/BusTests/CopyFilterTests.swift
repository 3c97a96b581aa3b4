import Foundation
import Testing
import Wire
import ZeroMQ

@testable import Bus

/// A subscriber of several bus instances hears each event once per instance and hands it on once.
struct CopyFilterTests {
    static func frames(id: String, sequence: UInt64) -> [Frame] {
        [Frame(frame: "pair.n"), EnvelopeWriter.write(id: id, source: "pair", type: "n", time: Date(), sequence: sequence, data: Array("{}".utf8))]
    }

    static func observations(_ events: [(id: String, sequence: UInt64)], severalInstances: Bool) -> [SequenceObservation] {
        var tracker = SequenceTracker()
        var copies: CopyFilter? = severalInstances ? CopyFilter() : nil
        return events.map { event in
            guard case .event(let received) = EventSubscriber<JSONValue>.decode(frames(id: event.id, sequence: event.sequence), tracker: &tracker, copies: &copies)
            else { return .first }
            return received.sequence
        }
    }

    @Test func aLateCopyOfTheFirstEventIsADuplicateNotARestart() {
        let events: [(id: String, sequence: UInt64)] = [("a", 1), ("b", 2), ("c", 3), ("a", 1), ("b", 2)]
        #expect(Self.observations(events, severalInstances: true) == [.first, .next, .next, .duplicate(last: 3), .duplicate(last: 3)])
        // Through one instance the same sequence 1 can only mean the source started again.
        #expect(Self.observations(events, severalInstances: false)[3] == .restarted(last: 3))
    }

    @Test func aSourceThatStartsAgainIsStillSeenToRestart() {
        let events: [(id: String, sequence: UInt64)] = [("a", 1), ("b", 2), ("x", 1), ("x", 1), ("y", 2)]
        #expect(Self.observations(events, severalInstances: true) == [.first, .next, .restarted(last: 2), .duplicate(last: 1), .next])
    }
}
