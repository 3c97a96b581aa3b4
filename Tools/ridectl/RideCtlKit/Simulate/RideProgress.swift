import Foundation
import RideModels

/// When a simulated ride's next step is due, so that a report can tell a ride in flight from a
/// stuck one: stuck is no progress for longer than the step's own expected time — the drive's
/// length while the car drives, the platform's driver search while the order waits for a driver,
/// a reaction's margin otherwise.
struct RideProgress: Sendable, Equatable {
    /// What a step may take beyond its expected time (reactions, a resync after 8 s, a busy machine).
    static let margin: TimeInterval = 30
    /// How long a new order waits for a driver before the platform cancels it (orders'
    /// `--driver-search-s` default).
    static let driverSearch: TimeInterval = 180

    private(set) var status: OrderStatus
    private(set) var dueBy: Date

    init(status: OrderStatus, at now: Date) {
        self.status = status
        dueBy = now.addingTimeInterval(Self.allowance(for: status))
    }

    /// The apps saw `status`: progress when it is a new one.
    mutating func saw(_ status: OrderStatus, at now: Date) {
        guard status != self.status else { return }
        self = RideProgress(status: status, at: now)
    }

    /// The car set off on a drive of `seconds` (after the speed-up) for this ride's current step.
    mutating func driving(seconds: TimeInterval, at now: Date) {
        dueBy = max(dueBy, now.addingTimeInterval(seconds + Self.margin))
    }

    func isOverdue(at now: Date) -> Bool { status.isOpen && now > dueBy }

    static func allowance(for status: OrderStatus) -> TimeInterval {
        status == .new ? driverSearch + margin : margin
    }
}
