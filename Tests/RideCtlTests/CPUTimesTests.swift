import Foundation
import Testing

@testable import RideCtlKit

@Suite struct CPUTimesTests {
    @Test func aProcessesTicksAreItsUserAndSystemFieldsCountedFromTheLastParenthesis() {
        // A command name with a space and a ')' of its own must not shift the fields.
        let stat = "4242 (ride (x) y) S 1 4242 1 0 -1 4194560 900 0 0 0 1234 567 0 0 20 0 51 0 792760 3133440 400 18446744073709551615 0"
        #expect(CPUTimes.processTicks(stat: stat) == 1234 + 567)
        #expect(CPUTimes.processTicks(stat: "4242 (cat) R 1 2 3") == nil)
        #expect(CPUTimes.processTicks(stat: "no parenthesis 1 2 3 4 5 6 7 8 9 10 11 12 13 14") == nil)
        #expect(CPUTimes.processTicks(stat: "1 (a) S 1 1 1 0 -1 0 0 0 0 0 x 5 0") == nil)
    }

    @Test func theMachinesBusyTicksLeaveOutIdleAndIOWait() throws {
        let stat = "cpu  784481 5716 162253 613771 3906 0 8675 191 7 0\ncpu0 1 2 3 4 5 6 7 8 0 0\nintr 1 2\n"
        let machine = try #require(CPUTimes.machineTicks(stat: stat))
        #expect(machine.total == 784481 + 5716 + 162253 + 613771 + 3906 + 0 + 8675 + 191)
        #expect(machine.busy == 784481 + 5716 + 162253 + 0 + 8675 + 191)
        #expect(CPUTimes.machineTicks(stat: "cpu0 1 2 3 4 5\n") == nil)
        #expect(CPUTimes.machineTicks(stat: "cpu  1 2 3\n") == nil)
    }

    @Test func whatWasUsedCountsOnlyProcessesSeenAtBothReadings() {
        let before = CPUTimes(processes: ["orders": 10, "gone": 3], machineBusy: 100, machineTotal: 200)
        let after = CPUTimes(processes: ["orders": 12.5, "new": 1], machineBusy: 103, machineTotal: 204)
        #expect(after.since(before) == CPUTimes(processes: ["orders": 2.5], machineBusy: 3, machineTotal: 4))
    }

    @Test func thisProcessCanBeRead() throws {
        let reading = CPUTimes.now(["me": getpid(), "nobody": Int32.max])
        #expect(reading.processes["me"] != nil)
        #expect(reading.processes["nobody"] == nil)
        #expect(reading.machineTotal > reading.machineBusy)
    }
}
