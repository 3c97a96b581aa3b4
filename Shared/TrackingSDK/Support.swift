import Foundation
import Synchronization
import Wire

/// A flag that can be set once; `set()` says whether this call set it.
final class CancelledFlag: Sendable {
    private let flag = Atomic<Bool>(false)
    func set() -> Bool { !flag.exchange(true, ordering: .acquiringAndReleasing) }
}

extension JSONValue {
    /// What metadata and geotags take (`HyperTrack.JSON.Object`).
    public typealias Object = [String: JSONValue]
}

/// Subscribers of one value: each gets the current value at once, then only changes, in order, on a
/// queue of the device's (never on the runtime's thread, and never under a lock).
final class Subscribers<Value: Sendable & Equatable>: Sendable {
    private struct Entry: Sendable {
        var callback: @Sendable (Value) -> Void
        var last: Value?
    }

    private let entries = Mutex<[UInt64: Entry]>([:])
    private let nextID = Atomic<UInt64>(1)
    private let queue: DispatchQueue

    init(queue: DispatchQueue) { self.queue = queue }

    func add(current: Value, _ callback: @escaping @Sendable (Value) -> Void) -> HyperTrack.Cancellable {
        let id = nextID.add(1, ordering: .relaxed).oldValue
        // Enqueued under the lock, like `publish`, so the queue sees values in the order they were set.
        entries.withLock { entries in
            entries[id] = Entry(callback: callback, last: current)
            queue.async { callback(current) }
        }
        return HyperTrack.Cancellable { [weak self] in
            _ = self?.entries.withLock { $0.removeValue(forKey: id) }
        }
    }

    /// Tells every subscriber whose last value differs.
    func publish(_ value: Value) {
        entries.withLock { entries in
            var due: [@Sendable (Value) -> Void] = []
            for (id, entry) in entries where entry.last != value {
                entries[id]!.last = value
                due.append(entry.callback)
            }
            if !due.isEmpty {
                let callbacks = due
                queue.async { for callback in callbacks { callback(value) } }
            }
        }
    }

    var isEmpty: Bool { entries.withLock { $0.isEmpty } }
}
