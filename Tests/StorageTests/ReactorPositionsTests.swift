import Bus
import Testing

@testable import ServiceStorage
@testable import Storage

/// What a reactor does with each event, by its own position rather than the subscriber's tracker.
@Suite struct ReactorPositionsTests {
    static func at(_ known: UInt64, verified: UInt64? = nil) -> ReactorPositions {
        var positions = ReactorPositions()
        positions.start("orders", at: verified ?? known, lastRead: nil)
        positions.took("orders", known)
        return positions
    }

    @Test func theNextIsTakenAJumpIsFilledAndTheRestSettledByTheLog() {
        let positions = Self.at(10, verified: 8)
        let gap = SequenceObservation.gap(SequenceGap(source: "orders", expected: 11, received: 1 << 62))
        #expect(positions.step("orders", sequence: 11, observation: .next) == .take)
        #expect(positions.step("orders", sequence: 1 << 62, observation: gap) == .fill(after: 10))
        // Whatever the tracker was steered to, the next sequence by the reactor's own count is taken.
        #expect(positions.step("orders", sequence: 11, observation: .conflict(last: 1 << 62)) == .take)
        #expect(positions.step("orders", sequence: 10, observation: .duplicate(last: 10)) == .skip)
        #expect(positions.step("orders", sequence: 10, observation: .conflict(last: 10)) == .checkConflict)
        #expect(positions.step("orders", sequence: 8, observation: .conflict(last: 10)) == .skip, "its log version was handled")
        #expect(positions.step("orders", sequence: 1, observation: .restarted(last: 10)) == .checkRestart)
        #expect(positions.step("orders", sequence: 11, observation: .first) == .take)
        #expect(positions.step("orders", sequence: 5, observation: .first) == .skip)
    }

    @Test func settingBackMovesKnownAndVerifiedBackAndBumpsTheEpoch() {
        var positions = Self.at(20, verified: 20)
        #expect(positions.setBack("orders", to: 25) == nil, "never forward")
        #expect(positions.setBack("orders", to: 12) == 1)
        #expect(positions["orders"]?.known == 12 && positions["orders"]?.verified == 12)
        positions.read("orders", after: 12, through: 15, last: .init(sequence: 15, id: "e15"))
        #expect(positions["orders"]?.verified == 15 && positions["orders"]?.lastRead?.id == "e15")
        positions.took("orders", 16)
        positions.read("orders", after: 17, through: 18, last: nil)
        #expect(
            positions["orders"]?.verified == 15 && positions["orders"]?.known == 18,
            "a read not joined to the verified run does not extend it")
        #expect(positions.restart("orders") == 2 && positions["orders"]?.known == 0)
    }
}
