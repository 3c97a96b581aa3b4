/// Which events of a source are done when several are handled at once: the highest sequence
/// below which every event has finished. A restart resumes after it, so an event that was
/// started but not finished when the process died is handled again (reactions are idempotent).
public struct Watermark: Sendable, Equatable {
    public private(set) var done: UInt64
    private var finishedAbove: Set<UInt64> = []

    public init(done: UInt64) { self.done = done }

    /// Marks `sequence` finished; returns true when `done` moved.
    @discardableResult
    public mutating func finish(_ sequence: UInt64) -> Bool {
        guard sequence > done else { return false }
        finishedAbove.insert(sequence)
        let before = done
        while finishedAbove.remove(done + 1) != nil { done += 1 }
        return done != before
    }

    /// Forgets what finished above `sequence` and goes back to it if beyond: those events are to be handled again.
    public mutating func setBack(to sequence: UInt64) {
        done = min(done, sequence)
        finishedAbove = finishedAbove.filter { $0 <= sequence }
    }
}
