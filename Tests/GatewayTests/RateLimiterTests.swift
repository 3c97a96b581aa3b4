import Testing

@testable import GatewayService

/// The token buckets on a clock the tests step (no sleeping).
@Suite struct RateLimiterTests {
    let start = ContinuousClock.now
    let three = RateLimit(perMinute: 3)

    func at(_ seconds: Double) -> ContinuousClock.Instant { start + .seconds(seconds) }

    func refused(_ seconds: Int) -> RateLimiter<String>.Refusal { .init(retryAfterSeconds: seconds) }

    @Test func aBurstPassesThenTheNextWaitsForItsRefill() {
        var limiter = RateLimiter<String>()
        for _ in 0..<3 { #expect(limiter.take([("a", three)], at: at(0)) == nil) }
        #expect(limiter.take([("a", three)], at: at(0)) == refused(20), "one token every 60/3 s")
        #expect(limiter.take([("a", three)], at: at(5)) == refused(15))
        #expect(limiter.take([("a", three)], at: at(20)) == nil, "refilled after Retry-After")
        #expect(limiter.take([("a", three)], at: at(20.5)) == refused(20), "rounded up, never 0")
    }

    @Test func keysAreCountedApart() {
        var limiter = RateLimiter<String>()
        for _ in 0..<3 { _ = limiter.take([("a", three)], at: at(0)) }
        #expect(limiter.take([("b", three)], at: at(0)) == nil)
        #expect(limiter.take([("a", three)], at: at(0)) != nil)
    }

    @Test func aRefusalTakesFromNoKeyAndWaitsForTheSlowest() {
        var limiter = RateLimiter<String>()
        let one = RateLimit(perMinute: 1)
        #expect(limiter.take([("address", three), ("account", one)], at: at(0)) == nil)
        // The account is out until 60 s; the refusals leave the address its 2.75 tokens.
        for _ in 0..<5 { #expect(limiter.take([("address", three), ("account", one)], at: at(15)) == refused(45)) }
        #expect(limiter.take([("address", three)], at: at(15)) == nil)
        #expect(limiter.take([("address", three)], at: at(15)) == nil)
        #expect(limiter.take([("address", three)], at: at(15)) == refused(5))
    }

    @Test func aBucketNeverHoldsMoreThanItsBurst() {
        var limiter = RateLimiter<String>()
        _ = limiter.take([("a", three)], at: at(0))
        for _ in 0..<3 { #expect(limiter.take([("a", three)], at: at(3600)) == nil) }
        #expect(limiter.take([("a", three)], at: at(3600)) != nil)
    }

    @Test func aClockGoingBackRefillsNothing() {
        var limiter = RateLimiter<String>()
        for _ in 0..<3 { _ = limiter.take([("a", three)], at: at(100)) }
        #expect(limiter.take([("a", three)], at: at(0)) == refused(20))
    }

    @Test func memoryIsBoundedDroppingRefilledBucketsFirst() {
        var limiter = RateLimiter<Int>(capacity: 3)
        _ = limiter.take([(1, three)], at: at(0))
        for _ in 0..<3 { _ = limiter.take([(2, three)], at: at(50)) }
        _ = limiter.take([(3, three)], at: at(60))
        // At 70 s bucket 1 is full again (as good as absent) and goes; 2 and 3 are still counting.
        #expect(limiter.take([(4, three)], at: at(70)) == nil)
        #expect(limiter.count == 3)
        #expect(limiter.take([(2, three)], at: at(70)) == nil, "one token back after 20 s")
        #expect(limiter.take([(2, three)], at: at(70)) != nil, "2 kept its count")
        // Nothing refilled: the fullest half goes (3, with most of its burst left), never the
        // key being held back (2, empty): a flood of new keys cannot flush a count.
        #expect(limiter.take([(5, three)], at: at(70)) == nil)
        #expect(limiter.count == 3)
        #expect(limiter.take([(2, three)], at: at(70)) != nil, "2 is still held back")
        #expect(limiter.take([(3, three)], at: at(70)) == nil)
    }

    @Test func aFloodOfNewKeysCannotFlushAKeyThatIsHeldBack() {
        var limiter = RateLimiter<Int>(capacity: 1000)
        for _ in 0..<3 { _ = limiter.take([(0, three)], at: at(0)) }
        #expect(limiter.take([(0, three)], at: at(0)) != nil)
        for key in 1...50_000 { _ = limiter.take([(key, three)], at: at(1)) }
        #expect(limiter.count <= 1000)
        #expect(limiter.take([(0, three)], at: at(1)) != nil, "key 0 is still out of tokens after 50 000 others")
    }
}
