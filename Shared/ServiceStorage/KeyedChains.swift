import Synchronization

/// Work chained per key: each piece starts once the previous piece of its key has finished, while
/// pieces of different keys run at once. A key's chain is dropped when its last piece ends.
final class KeyedChains: Sendable {
    private struct Chains {
        var next: UInt64 = 0
        var tails: [String: (id: UInt64, task: Task<Void, Never>)] = [:]
    }

    private let chains = Mutex(Chains())

    func append(_ key: String, _ work: @escaping @Sendable () async -> Void) -> Task<Void, Never> {
        chains.withLock { chains in
            chains.next += 1
            let (id, previous) = (chains.next, chains.tails[key]?.task)
            let task = Task {
                await previous?.value
                await work()
                self.release(key, id: id)
            }
            chains.tails[key] = (id, task)
            return task
        }
    }

    var count: Int { chains.withLock { $0.tails.count } }

    private func release(_ key: String, id: UInt64) {
        chains.withLock { chains in
            if chains.tails[key]?.id == id { chains.tails[key] = nil }
        }
    }
}
