import Testing

@testable import RideCtlKit

/// The simulator's lanes: one ride's work in the order it was queued, other rides' beside it.
@Suite(.timeLimit(.minutes(1))) struct RideLanesTests {
    actor Log {
        var entries: [String] = []
        func add(_ entry: String) { entries.append(entry) }
    }

    @Test func aRidesWorkRunsInOrderAndOtherRidesDoNotWaitForIt() async {
        let lanes = RideLanes()
        let log = Log()
        let (otherRide, otherRideRan) = AsyncStream<Void>.makeStream()
        // The first piece of ride a waits until ride b's has run: queued behind a, b's would never run.
        await lanes.enqueue("a") {
            for await _ in otherRide { break }
            await log.add("a1")
        }
        await lanes.enqueue("a") { await log.add("a2") }
        await lanes.enqueue("b") {
            await log.add("b1")
            otherRideRan.yield()
        }
        while await log.entries.count < 3 { try? await Task.sleep(for: .milliseconds(5)) }
        #expect(await log.entries == ["b1", "a1", "a2"])
    }
}
