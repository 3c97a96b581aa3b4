import Testing

@testable import RideCtlKit

@Suite struct CityPlanTests {
    @Test func newYorksPeakInSteps() {
        let plan = CityPlan()
        #expect(plan.problem == nil)
        let last = plan.steps.last!
        #expect(last.drivers == 50_000 && last.ridesPerHour == 60_000)
        #expect(last.fixesPerSecond == 12_500, "a fix every 4 s from every driver")
        #expect(abs(last.bookingsPerSecond - 60_000.0 / 3600) < 1e-9)
        #expect(plan.steps.map(\.drivers) == [2500, 5000, 12_500, 25_000, 50_000])
        // 16.7 bookings/s × (4 + 12 + 2 s) × 1.5 + 10 lanes.
        #expect(plan.lanes == Int((60_000.0 / 3600 * 18 * 1.5).rounded(.up)) + 10)
    }

    @Test func badPlansAreNamed() {
        var plan = CityPlan()
        plan.fractions = [0.5, 0.1]
        #expect(plan.problem?.contains("--steps must grow") == true)
        plan.fractions = [0, 1]
        #expect(plan.problem?.contains("--steps must be fractions") == true)
        plan = CityPlan()
        plan.speedup = 0
        #expect(plan.problem?.contains("--speedup") == true)
        plan = CityPlan()
        plan.fixInterval = .nan
        #expect(plan.problem?.contains("--fix-interval") == true)
    }

    @Test func theLargestCityIsTheLastStepThatMetTheTargets() {
        let steps = CityPlan().steps
        func result(_ index: Int, p99: Double, stuck: Int = 0) -> CityStepResult {
            var result = CityStepResult(step: steps[index])
            (result.reactionP99, result.reactionSamples, result.stuck) = (p99, 10, stuck)
            return result
        }
        #expect(CityPlan.largest([result(0, p99: 2), result(1, p99: 4), result(2, p99: 9)])?.step == steps[1])
        #expect(CityPlan.largest([result(0, p99: 2), result(1, p99: 3, stuck: 1)])?.step == steps[0], "a stuck ride fails a step")
        #expect(CityPlan.largest([result(0, p99: 7)]) == nil)
        #expect(!CityStepResult(step: steps[0]).met, "no reactions seen is no evidence")
    }
}
