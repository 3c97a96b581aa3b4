import Foundation
import RideModels
import Testing

@testable import RideCtlKit

@Suite struct RideProgressTests {
    let start = Date(timeIntervalSince1970: 1_000_000)

    @Test func aNewOrderHasThePlatformsDriverSearchToFindADriver() {
        let progress = RideProgress(status: .new, at: start)
        #expect(!progress.isOverdue(at: start.addingTimeInterval(RideProgress.driverSearch)))
        #expect(progress.isOverdue(at: start.addingTimeInterval(RideProgress.driverSearch + RideProgress.margin + 1)))
    }

    @Test func aDriveIsDueWhenItsLengthAndAMarginHavePassed() {
        var progress = RideProgress(status: .new, at: start)
        progress.saw(.pickingUp, at: start.addingTimeInterval(5))
        progress.driving(seconds: 120, at: start.addingTimeInterval(6))
        #expect(!progress.isOverdue(at: start.addingTimeInterval(6 + 120 + RideProgress.margin - 1)), "in flight while the car drives")
        #expect(progress.isOverdue(at: start.addingTimeInterval(6 + 120 + RideProgress.margin + 1)), "stuck once it should have arrived")
    }

    @Test func seeingTheSameStatusAgainIsNoProgress() {
        var progress = RideProgress(status: .new, at: start)
        progress.saw(.reachedPickup, at: start)
        progress.saw(.reachedPickup, at: start.addingTimeInterval(25))
        #expect(progress.isOverdue(at: start.addingTimeInterval(RideProgress.margin + 1)))
    }

    @Test func aFinishedRideIsNeverOverdue() {
        var progress = RideProgress(status: .new, at: start)
        progress.saw(.completed, at: start)
        #expect(!progress.isOverdue(at: start.addingTimeInterval(100_000)))
    }
}
