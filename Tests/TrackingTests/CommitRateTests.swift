import Testing

@testable import TrackingService

/// When the history writer paces its commits: only while the last whole second was heavy.
@Suite struct CommitRateTests {
    let second: UInt64 = 1_000_000_000

    @Test func aLightLoadIsNeverPaced() {
        var rate = StoreWriter.CommitRate(pacedAbove: 1000)
        for tick in 0..<300 {
            let now = second + UInt64(tick) * second / 100  // 3 s of commits of 5 locations, 100 a second
            do {
                let heavy = rate.isHeavy(now: now)
                #expect(!heavy)
            }
            rate.count(5, now: now)
        }
    }

    @Test func aHeavySecondPacesTheNextAndSilenceEndsIt() {
        var rate = StoreWriter.CommitRate(pacedAbove: 1000)
        rate.count(0, now: second)
        for tick in 0..<100 { rate.count(50, now: second + UInt64(tick) * second / 100) }  // 5 000 in one second
        do {
            let heavy = rate.isHeavy(now: second + second / 2)
            #expect(!heavy, "the first window is still open")
        }
        do {
            let heavy = rate.isHeavy(now: 2 * second + 1)
            #expect(heavy)
        }
        do {
            let heavy = rate.isHeavy(now: 2 * second + second / 2)
            #expect(heavy, "stays heavy for the whole next window")
        }
        do {
            let heavy = rate.isHeavy(now: 3 * second + 1)
            #expect(!heavy, "a second with no commits is light")
        }
        rate.count(5000, now: 3 * second + 2)
        do {
            let heavy = rate.isHeavy(now: 10 * second)
            #expect(!heavy, "after a long silence the old window does not count")
        }
    }
}
