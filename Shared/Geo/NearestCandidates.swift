/// One point a search may return, with everything needed to order it.
@usableFromInline
struct Candidate {
    @usableFromInline let handle: Int
    @usableFromInline let point: GeoPoint
    @usableFromInline let distance: Double
    /// When the id was inserted into the grid; the last tie-breaker, unique per indexed id.
    let sequence: UInt64

    /// The result order: distance, then latitude, then longitude, then insertion order. Total and
    /// deterministic, so equal distances never come back in a run-dependent order.
    func precedes(_ other: Candidate) -> Bool {
        if distance != other.distance { return distance < other.distance }
        if point.latitude != other.point.latitude { return point.latitude < other.point.latitude }
        if point.longitude != other.point.longitude { return point.longitude < other.point.longitude }
        return sequence < other.sequence
    }
}

/// The best `limit` candidates seen so far, kept in a max-heap whose root is the worst of them.
///
/// A 2 km search in a busy city sees thousands of candidates but returns ten: a bounded heap costs
/// O(n log k) and rejects most candidates with one comparison against the root, where sorting all
/// would cost O(n log n) and allocate for every candidate.
struct NearestCandidates {
    let limit: Int
    private var heap: [Candidate] = []

    init(limit: Int) {
        self.limit = limit
        // A huge limit (callers pass Int.max for "all") must not reserve memory up front.
        heap.reserveCapacity(min(limit, 64))
    }

    var isFull: Bool {
        heap.count >= limit
    }

    /// The distance a candidate must not exceed to still get in, once the heap is full.
    var worstDistance: Double {
        heap.first?.distance ?? .infinity
    }

    /// Whether `candidate` would be kept; lets the caller skip its filter for hopeless candidates.
    func wouldAccept(_ candidate: Candidate) -> Bool {
        !isFull || candidate.precedes(heap[0])
    }

    /// Adds a candidate that `wouldAccept` approved.
    mutating func insert(_ candidate: Candidate) {
        if isFull {
            heap[0] = candidate
            siftDown(from: 0)
        } else {
            heap.append(candidate)
            siftUp(from: heap.count - 1)
        }
    }

    /// The kept candidates, best first.
    func sorted() -> [Candidate] {
        heap.sorted { $0.precedes($1) }
    }

    private mutating func siftUp(from index: Int) {
        var child = index
        while child > 0 {
            let parent = (child - 1) / 2
            guard heap[parent].precedes(heap[child]) else { return }
            heap.swapAt(parent, child)
            child = parent
        }
    }

    private mutating func siftDown(from index: Int) {
        var parent = index
        while true {
            let left = 2 * parent + 1
            let right = left + 1
            var worst = parent
            if left < heap.count, heap[worst].precedes(heap[left]) { worst = left }
            if right < heap.count, heap[worst].precedes(heap[right]) { worst = right }
            guard worst != parent else { return }
            heap.swapAt(parent, worst)
            parent = worst
        }
    }
}
