import Testing

@testable import Storage

/// The record of database calls under way: a call that runs long is found with its place and
/// phase; one that ended is not.
@Suite struct StorageCallsTests {
    @Test func callsOverTheLimitAreGroupedByPlaceAndPhase() {
        let calls = StorageCalls()
        let start = ContinuousClock.now
        let waiting = [calls.begin(site: "A.swift:1"), calls.begin(site: "A.swift:1")]
        let answering = calls.begin(site: "B.swift:2")
        calls.leased(answering)
        let finished = calls.begin(site: "C.swift:3")
        calls.end(finished)

        #expect(calls.slowCalls(now: start + .seconds(5)).isEmpty, "nothing is slow before the limit")
        let slow = calls.slowCalls(now: start + StorageCalls.slow + .seconds(1))
        #expect(slow.map(\.site) == ["A.swift:1", "B.swift:2"] || slow.map(\.site) == ["B.swift:2", "A.swift:1"])
        #expect(slow.first { $0.site == "A.swift:1" }.map { ($0.count, $0.leased) } ?? (0, true) == (2, false))
        #expect(slow.first { $0.site == "B.swift:2" }.map { ($0.count, $0.leased) } ?? (0, false) == (1, true))
        #expect(!slow.contains { $0.site == "C.swift:3" })

        for call in waiting { calls.end(call) }
        calls.end(answering)
        #expect(calls.slowCalls(now: start + .seconds(60)).isEmpty, "ended calls are forgotten")
    }
}
