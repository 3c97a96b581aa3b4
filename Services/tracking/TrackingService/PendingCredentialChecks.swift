/// Batches waiting for users' verdict on their device credential, grouped by what is asked
/// (device and credential), oldest question first. Bounded: past `capacity` waiting batches a new
/// one is refused at once, so a flood of unknown devices costs a bounded memory and no calls.
struct PendingCredentialChecks<Waiter> {
    /// Waiting batches (not questions) at most.
    let capacity: Int
    private(set) var count = 0
    private var questions: [CredentialPair] = []
    private var waiters: [CredentialPair: [Waiter]] = [:]

    init(capacity: Int) { self.capacity = capacity }

    var isEmpty: Bool { count == 0 }

    /// Queues `waiter` for the verdict on `pair`; false (nothing queued) when full.
    mutating func add(_ pair: CredentialPair, _ waiter: Waiter) -> Bool {
        guard count < capacity else { return false }
        if waiters[pair] == nil { questions.append(pair) }
        waiters[pair, default: []].append(waiter)
        count += 1
        return true
    }

    /// The oldest `limit` questions and everyone waiting for each: what one call to users asks.
    mutating func take(atMost limit: Int) -> [(pair: CredentialPair, waiters: [Waiter])] {
        let oldest = questions.prefix(limit)
        questions.removeFirst(oldest.count)  // once per interval: the copy costs nothing that matters
        return oldest.map { pair in
            let waiting = waiters.removeValue(forKey: pair) ?? []
            count -= waiting.count
            return (pair, waiting)
        }
    }
}
