import Bus
import Logging
import ServiceKit
import Testing

@Suite struct RejectionLogTests {
    let logger = Logger(label: "rejections-test")

    @Test func aRefusedTokenIsLoggedOncePerClientAndInterval() {
        let log = RejectionLog(interval: .seconds(60), capacity: 2)
        let start = ContinuousClock.now
        #expect(log.wouldLog(from: "10.0.0.1", now: start))
        log.note("token_invalid", from: "10.0.0.1", logger: logger, now: start)
        #expect(!log.wouldLog(from: "10.0.0.1", now: start + .seconds(59)), "the rest of the minute is counted, not logged")
        #expect(log.wouldLog(from: "10.0.0.2", now: start), "another client is logged on its own")
        #expect(log.wouldLog(from: "10.0.0.1", now: start + .seconds(60)), "and again the next interval")
        // Bounded: a third client empties the table rather than growing it.
        log.note("token_expired", from: "10.0.0.2", logger: logger, now: start)
        log.note("token_expired", from: "10.0.0.3", logger: logger, now: start)
        #expect(log.wouldLog(from: "10.0.0.1", now: start + .seconds(1)))
    }
}
