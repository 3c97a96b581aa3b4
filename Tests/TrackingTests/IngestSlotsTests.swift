import Foundation
import Testing
import ZeroMQ

@testable import TrackingService

/// A device's commands go to the connection that last proved its credential, and the tables of
/// the ingest socket are bounded.
@Suite struct IngestSlotsTests {
    let start = ContinuousClock.now

    @Test func theConnectionThatLastProvedADeviceGetsItsSlot() {
        var slots = IngestSlots(capacity: 10)
        #expect(slots.connection(of: "dan-phone") == nil, "no connection speaks for a device before one proves it")
        slots.proven("dan-phone", by: [1, 2, 3], at: start)
        #expect(slots.connection(of: "dan-phone") == [1, 2, 3])
        // The phone reconnected with a new socket (a new random id) and proved it again.
        slots.proven("dan-phone", by: [9, 9], at: start + .seconds(1))
        #expect(slots.connection(of: "dan-phone") == [9, 9])
        #expect(slots.connection(of: "eve-phone") == nil)
    }

    @Test func pastItsCapacityTheLongestUnprovenAreForgotten() {
        var slots = IngestSlots(capacity: 10)
        for i in 0..<10 { slots.proven("d-\(i)", by: [UInt8(i + 1)], at: start + .seconds(i)) }
        slots.proven("d-0", by: [42], at: start + .seconds(20))  // proven again: now the newest
        slots.proven("new", by: [77], at: start + .seconds(21))
        #expect(slots.count == 10)
        #expect(slots.connection(of: "d-1") == nil, "the longest unproven went")
        #expect(slots.connection(of: "d-0") == [42])
        #expect(slots.connection(of: "new") == [77])
    }
}

@Suite struct ConnectionRateLimiterTests {
    let start = ContinuousClock.now

    @Test func aConnectionGetsItsBurstThenItsRate() {
        var limiter = ConnectionRateLimiter(rate: 10, burst: 5, capacity: 100)
        let admitted = (0..<8).filter { _ in limiter.admit([1], now: start) }.count
        #expect(admitted == 5, "the burst, then refused")
        let other = limiter.admit([2], now: start)
        #expect(other, "another connection has its own bucket")
        let half = limiter.admit([1], now: start + .milliseconds(50))
        #expect(!half, "half a token is not enough")
        let one = limiter.admit([1], now: start + .milliseconds(110))
        #expect(one, "a token a tenth of a second")
        let next = limiter.admit([1], now: start + .milliseconds(120))
        #expect(!next)
        let later = (0..<8).filter { _ in limiter.admit([1], now: start + .seconds(60)) }.count
        #expect(later == 5, "an idle connection refills to its burst, no more")
    }

    @Test func theTableIsBoundedAndIdleConnectionsMakeRoom() {
        var limiter = ConnectionRateLimiter(rate: 1, burst: 2, capacity: 3)
        let first = (1...3).filter { limiter.admit([UInt8($0)], now: start) }.count
        #expect(first == 3)
        let crowded = limiter.admit([4], now: start)
        #expect(!crowded, "every bucket busy: a new connection is refused")
        #expect(limiter.count == 3)
        // Three seconds later the first three have refilled: they are forgotten, and there is room.
        let roomy = limiter.admit([4], now: start + .seconds(3))
        #expect(roomy)
        #expect(limiter.count == 1)
    }
}
