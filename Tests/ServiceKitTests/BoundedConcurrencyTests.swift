import ServiceKit
import Synchronization
import Testing

/// `forEach(_:atMost:_:)`: every item once, never more than `width` at a time, and side by side.
@Suite struct BoundedConcurrencyTests {
    final class Tally: Sendable {
        struct Counts {
            var running = 0
            var most = 0
            var seen: [Int] = []
        }
        let counts = Mutex(Counts())
    }

    @Test(arguments: [1, 4, 0])
    func everyItemRunsOnceAndNoMoreThanTheWidthAtATime(width: Int) async throws {
        let tally = Tally()
        await forEach(0..<40, atMost: width) { item in
            tally.counts.withLock {
                $0.running += 1
                $0.most = max($0.most, $0.running)
            }
            try? await Task.sleep(for: .milliseconds(5))
            tally.counts.withLock {
                $0.running -= 1
                $0.seen.append(item)
            }
        }
        let counts = tally.counts.withLock { $0 }
        #expect(counts.seen.sorted() == Array(0..<40))
        #expect(counts.running == 0, "every item ended before forEach returned")
        #expect(counts.most <= max(1, width))
    }

    /// The first item waits for the last: run one after another, it would wait for good.
    @Test(.timeLimit(.minutes(1))) func itemsRunSideBySide() async {
        let (last, lastRan) = AsyncStream<Void>.makeStream()
        await forEach(0..<3, atMost: 3) { item in
            if item == 0 {
                for await _ in last { break }
            } else if item == 2 {
                lastRan.yield()
            }
        }
    }
}
