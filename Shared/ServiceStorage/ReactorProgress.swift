import Storage

/// A reactor's watermarks, saved at most every 200 ms (and at the end).
///
/// When the reactor sets a source back (it took events its publisher's log does not have), the
/// watermark goes back with it, and handlers of the events taken before that report too late to
/// move it past the point set back to: a forged sequence never reaches the stored cursor.
actor ReactorProgress {
    private let cursors: any ReactorCursors
    private var marks: [String: Watermark] = [:]
    private var saved: [String: UInt64] = [:]
    /// Per source, the latest set-backs: from that epoch on, nothing above `to` counts of earlier epochs.
    private var setBacks: [String: [(epoch: Int, to: UInt64)]] = [:]
    private var lastSave = ContinuousClock.now

    init(cursors: any ReactorCursors) { self.cursors = cursors }

    func start(source: String, after: UInt64) {
        marks[source] = Watermark(done: after)
        saved[source] = after
    }

    /// `sequence` of `source` was handled, by a handler started in `epoch`.
    func finish(source: String, sequence: UInt64, epoch: Int = 0) async {
        let ceiling = setBacks[source]?.filter { $0.epoch > epoch }.map(\.to).min()
        if let ceiling, sequence > ceiling { return }
        marks[source, default: Watermark(done: 0)].finish(sequence)
        if ContinuousClock.now - lastSave > .milliseconds(200) { await save() }
    }

    /// Back to `sequence` from `epoch` on (`ReactorPositions.setBack`, `restart`).
    func setBack(source: String, to sequence: UInt64, epoch: Int) {
        marks[source, default: Watermark(done: 0)].setBack(to: sequence)
        setBacks[source, default: []].append((epoch, sequence))
        if setBacks[source, default: []].count > 32 { setBacks[source]?.removeFirst() }
    }

    func save() async {
        lastSave = ContinuousClock.now
        for (source, mark) in marks where saved[source] != mark.done {
            do {
                try await cursors.saveReactorCursor(source: source, sequence: mark.done)
                saved[source] = mark.done
            } catch {
                // Kept in memory; the next save tries again. A crash before then replays events, harmlessly.
            }
        }
    }
}
