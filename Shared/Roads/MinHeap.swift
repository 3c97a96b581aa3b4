/// A binary min-heap of (priority, payload), kept minimal for the searches' inner loops.
struct MinHeap<Payload> {
    private var items: [(priority: Double, payload: Payload)] = []

    init(capacity: Int = 0) { items.reserveCapacity(capacity) }

    var isEmpty: Bool { items.isEmpty }
    var count: Int { items.count }
    /// The smallest priority, or infinity when empty.
    var minimum: Double { items.first?.priority ?? .infinity }

    mutating func removeAll() { items.removeAll(keepingCapacity: true) }

    mutating func push(_ priority: Double, _ payload: Payload) {
        items.append((priority, payload))
        var child = items.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard items[child].priority < items[parent].priority else { break }
            items.swapAt(child, parent)
            child = parent
        }
    }

    mutating func pop() -> (priority: Double, payload: Payload)? {
        guard let last = items.popLast() else { return nil }
        guard !items.isEmpty else { return last }
        let top = items[0]
        items[0] = last
        var parent = 0
        while true {
            let left = 2 * parent + 1
            guard left < items.count else { break }
            let right = left + 1
            let child = right < items.count && items[right].priority < items[left].priority ? right : left
            guard items[child].priority < items[parent].priority else { break }
            items.swapAt(child, parent)
            parent = child
        }
        return top
    }
}
