import Foundation

/// The steps of `ridectl bench city`: a city of `drivers` drivers and `ridesPerHour` rides an hour
/// at its peak (by default New York's: 50,000 drivers, 60,000 rides an hour), taken a fraction at a
/// time. Each step's load is open-loop, shaped like the city: every driver sends a fix every
/// `fixInterval` seconds, riders book at a Poisson rate, and a ride takes minutes — `pickupMinutes`
/// to the pickup and `rideMinutes` to the drop-off — run `speedup` times faster.
struct CityPlan: Sendable, Equatable {
    struct Step: Sendable, Equatable {
        var fraction: Double
        var drivers: Int
        var ridesPerHour: Int
        /// Fixes per second from all drivers.
        var fixesPerSecond: Int
        /// Bookings per second (the Poisson rate).
        var bookingsPerSecond: Double
    }

    var drivers = 50_000
    var ridesPerHour = 60_000
    var fractions = [0.05, 0.1, 0.25, 0.5, 1.0]
    var fixInterval = 4.0
    var speedup = 60.0
    var pickupMinutes = 4.0
    var rideMinutes = 12.0

    /// Why the plan cannot run, or nil.
    var problem: String? {
        if drivers < 1 || drivers > 1_000_000 { return "--drivers must be from 1 to 1000000" }
        if ridesPerHour < 1 || ridesPerHour > 10_000_000 { return "--rides-per-hour must be from 1 to 10000000" }
        if fractions.isEmpty || fractions.contains(where: { !($0 > 0 && $0 <= 1) }) {
            return "--steps must be fractions in (0, 1], e.g. 0.1,0.5,1"
        }
        if fractions != fractions.sorted() { return "--steps must grow: the load is raised step by step" }
        if !(fixInterval >= 0.1 && fixInterval <= 60) { return "--fix-interval must be from 0.1 to 60 seconds" }
        if !(speedup >= 1 && speedup <= 3600) { return "--speedup must be from 1 to 3600" }
        if !(pickupMinutes >= 0 && rideMinutes > 0 && pickupMinutes + rideMinutes <= 240) {
            return "--pickup-minutes and --ride-minutes must be positive, 4 hours at most together"
        }
        return nil
    }

    var steps: [Step] {
        fractions.map { fraction in
            let drivers = max(1, Int((Double(self.drivers) * fraction).rounded()))
            let rides = max(1, Int((Double(ridesPerHour) * fraction).rounded()))
            return Step(
                fraction: fraction, drivers: drivers, ridesPerHour: rides,
                fixesPerSecond: max(1, Int((Double(drivers) / fixInterval).rounded())),
                bookingsPerSecond: Double(rides) / 3600)
        }
    }

    /// Seconds a ride drives (to the pickup, then to the drop-off), sped up.
    var pickupSeconds: Double { pickupMinutes * 60 / speedup }
    var rideSeconds: Double { rideMinutes * 60 / speedup }

    /// Riders and drivers who ride (each a lane of its own): the rides in flight at the largest
    /// step (Little's law, with 2 s of the platform's own steps per ride) and half as many again for
    /// Poisson bursts. The city's other drivers only stream fixes.
    var lanes: Int {
        let rate = steps.map(\.bookingsPerSecond).max() ?? 0
        return Int((rate * (pickupSeconds + rideSeconds + 2) * 1.5).rounded(.up)) + 10
    }

    /// The largest step that met the targets, in the order run (later steps are larger).
    static func largest(_ results: [CityStepResult]) -> CityStepResult? {
        results.last { $0.met }
    }
}

/// What one step of `ridectl bench city` measured.
struct CityStepResult: Sendable, Equatable {
    var step: CityPlan.Step
    var booked = 0
    var completed = 0
    var stuck = 0
    /// Bookings the load generator could not place: every lane was riding (its limit, not the platform's).
    var unplaced = 0
    var reactionP50 = 0.0
    var reactionP99 = 0.0
    var reactionSamples = 0
    /// CPU seconds of the platform's processes and of the load generator's, and the step's length.
    var platformCPU = 0.0
    var loadCPU = 0.0
    var seconds = 0.0

    /// Reaction p99 within 5 ms, nothing stuck, every booking placed, and some reactions seen.
    var met: Bool { reactionSamples > 0 && reactionP99 <= 5 && stuck == 0 && unplaced == 0 }

    /// Milliseconds of the platform's CPU per completed ride.
    var cpuPerRide: Double? { completed > 0 ? platformCPU * 1000 / Double(completed) : nil }
}
