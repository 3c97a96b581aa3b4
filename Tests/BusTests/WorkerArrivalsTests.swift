import Bus
import Testing

@Suite struct WorkerArrivalsTests {
    @Test func aServiceIsReportedOnceItsWorkersStopArriving() {
        var arrivals = WorkerArrivals(quiet: 300)
        for i in 0..<32 { arrivals.arrived(service: "orders", now: Int64(i)) }
        arrivals.arrived(service: "trips", now: 10)
        #expect(arrivals.settled(now: 309).isEmpty, "orders' last worker came at 31: not settled before 331")
        #expect(arrivals.settled(now: 310) == ["trips"])
        #expect(arrivals.settled(now: 331) == ["orders"])
        #expect(arrivals.settled(now: 10_000).isEmpty, "each settles once")
    }

    @Test func aLaterArrivalMakesAnotherLine() {
        var arrivals = WorkerArrivals(quiet: 100)
        arrivals.arrived(service: "orders", now: 0)
        #expect(arrivals.settled(now: 100) == ["orders"])
        arrivals.arrived(service: "orders", now: 5_000)
        #expect(arrivals.settled(now: 5_100) == ["orders"])
    }
}
