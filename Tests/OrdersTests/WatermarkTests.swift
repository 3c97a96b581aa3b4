import Storage
import Testing

@testable import OrdersService

@Suite struct WatermarkTests {
    @Test func doneMovesOnlyOverAnUnbrokenRun() {
        var mark = Watermark(done: 10)
        // Each step: the sequence finished, whether `done` moved, and where it is.
        let steps: [(UInt64, Bool, UInt64)] = [
            (12, false, 10), (13, false, 10), (11, true, 13), (9, false, 13), (13, false, 13), (14, true, 14),
        ]
        for (sequence, moves, done) in steps {
            let moved = mark.finish(sequence)
            #expect(moved == moves, "finishing \(sequence)")
            #expect(mark.done == done, "after \(sequence)")
        }
    }
}
