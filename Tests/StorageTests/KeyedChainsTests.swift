import Synchronization
import Testing

@testable import ServiceStorage
@testable import Storage

/// `EventReactor` handles events of one key (an order) in the order they came, others at once.
@Suite struct KeyedChainsTests {
    @Test func workOfOneKeyRunsInOrderAndOtherKeysDoNotWait() async {
        let chains = KeyedChains()
        let log = Mutex<[String]>([])
        // The first piece of "a" is the slowest: "a2" must still wait for it, "b1" must not.
        let a1 = chains.append("a") {
            try? await Task.sleep(for: .milliseconds(300))
            log.withLock { $0.append("a1") }
        }
        let a2 = chains.append("a") { log.withLock { $0.append("a2") } }
        let b1 = chains.append("b") { log.withLock { $0.append("b1") } }
        await b1.value
        #expect(log.withLock { $0 } == ["b1"], "b1 ran while a1 was still sleeping")
        await a2.value
        await a1.value
        #expect(log.withLock { $0 } == ["b1", "a1", "a2"])
        try? await Task.sleep(for: .milliseconds(50))
        #expect(chains.count == 0, "finished chains are dropped")
    }
}
