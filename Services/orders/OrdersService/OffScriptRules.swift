import Foundation
import Geo
import RideModels

/// When a ride may leave the script: a driver reports arriving where the geofence has not fired
/// only from near the place (their phone's last position within `arrivalRadius`), and ends a ride
/// as a no-show only once the rider has had `noShowWait` to come.
public struct OffScriptRules: Sendable, Equatable {
    /// Seconds a driver waits at the pickup before a no-show (`--no-show-wait-s`).
    public var noShowWait: TimeInterval
    /// Metres from the pickup or drop-off within which a driver may report arriving (`--arrival-radius-m`).
    public var arrivalRadius: Double

    public static let defaultNoShowWait = 300
    public static let defaultArrivalRadius = 300

    public init(noShowWait: TimeInterval = TimeInterval(defaultNoShowWait), arrivalRadius: Double = Double(defaultArrivalRadius)) {
        self.noShowWait = noShowWait
        self.arrivalRadius = arrivalRadius
    }

    /// Why the driver, last seen at `position`, may not report arriving at `place`; nil when they may.
    func arrivalProblem(at position: GeoPoint?, place: Place, leg: String) -> String? {
        guard let position else { return "no position of the driver's phone yet: arriving at the \(leg) is reported from near it" }
        let distance = position.distance(to: place.point)
        guard distance <= arrivalRadius else {
            return
                "the driver's phone was last \(Int(distance.rounded())) m from the \(leg); arriving is reported within \(Int(arrivalRadius)) m of it"
        }
        return nil
    }

    /// Why a no-show may not be called `now` for a driver who reached the pickup at `reachedAt`; nil when it may.
    func noShowProblem(reachedAt: Date, now: Date) -> String? {
        let waited = now.timeIntervalSince(reachedAt)
        guard waited >= noShowWait else {
            return
                "the rider has \(Int((noShowWait - waited).rounded(.up))) s more to come: a no-show is called \(Int(noShowWait)) s after reaching the pickup"
        }
        return nil
    }
}
