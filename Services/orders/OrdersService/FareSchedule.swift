/// The fare of a completed ride: base + per km + per minute, never below the minimum, in minor
/// units (cents) so that sums and comparisons are exact. Configured per deployment.
public struct FareSchedule: Sendable, Equatable, Codable {
    public var currency: String
    public var baseCents: Int
    public var perKilometreCents: Int
    public var perMinuteCents: Int
    public var minimumCents: Int
    /// What a rider pays for cancelling after the driver reached the pickup; 0 is no fee.
    public var cancellationFeeCents: Int

    public init(
        currency: String = "USD", baseCents: Int = 250, perKilometreCents: Int = 120, perMinuteCents: Int = 30, minimumCents: Int = 500,
        cancellationFeeCents: Int = 0
    ) {
        self.cancellationFeeCents = cancellationFeeCents
        self.currency = currency
        self.baseCents = baseCents
        self.perKilometreCents = perKilometreCents
        self.perMinuteCents = perMinuteCents
        self.minimumCents = minimumCents
    }

    /// The fare for `metres` driven in `seconds` at `surge` times the schedule, rounded to the
    /// nearest cent, never below the minimum. Negative or non-finite inputs count as zero (a
    /// summary never makes a fare negative); a surge below 1 counts as 1.
    public func fareCents(metres: Double, seconds: Double, surge: Double = 1) -> Int {
        let km = metres.isFinite ? max(0, metres) / 1000 : 0
        let minutes = seconds.isFinite ? max(0, seconds) / 60 : 0
        let raw = Double(baseCents) + km * Double(perKilometreCents) + minutes * Double(perMinuteCents)
        let multiplier = surge.isFinite ? max(1, surge) : 1
        return max(minimumCents, Int((raw * multiplier).rounded()))
    }

    /// The first thing wrong with the schedule, naming the field, or nil.
    public var problem: String? {
        if currency.count != 3 || !currency.allSatisfy({ $0.isUppercase && $0.isASCII }) {
            return "currency: must be a three-letter code such as USD, got \"\(currency)\""
        }
        for (name, value) in [
            ("base", baseCents), ("per_km", perKilometreCents), ("per_minute", perMinuteCents), ("minimum", minimumCents),
            ("cancellation_fee", cancellationFeeCents),
        ] where value < 0 {
            return "\(name): must not be negative, got \(value)"
        }
        return nil
    }
}

/// Surge pricing by demand near the pickup: when more orders wait for a driver within `radius`
/// than there are available drivers there, fares rise by `step` for each waiting order per
/// driver beyond one, up to `maximum` (rounded to 0.1). `maximum` 1 turns surge off.
public struct SurgePolicy: Sendable, Equatable {
    public var maximum: Double = 1
    public var radius: Double = 2000
    public var step: Double = 0.25

    public init(maximum: Double = 1, radius: Double = 2000, step: Double = 0.25) {
        self.maximum = maximum
        self.radius = radius
        self.step = step
    }

    public var isOn: Bool { maximum > 1 }

    /// The multiplier when `waitingOrders` (counting the one being priced) compete for `availableDrivers`.
    public func multiplier(waitingOrders: Int, availableDrivers: Int) -> Double {
        guard isOn else { return 1 }
        let ratio = Double(max(1, waitingOrders)) / Double(max(1, availableDrivers))
        let raw = 1 + max(0, ratio - 1) * step
        return min(maximum, (raw * 10).rounded() / 10)
    }

    /// The first thing wrong with the policy, naming the field, or nil.
    public var problem: String? {
        guard maximum.isFinite, (1...10).contains(maximum) else { return "maximum: must be from 1 (off) to 10, got \(maximum)" }
        guard radius.isFinite, (100...50_000).contains(radius) else { return "radius_m: must be from 100 to 50000, got \(radius)" }
        guard step.isFinite, step > 0, step <= 5 else { return "step: must be above 0 and at most 5, got \(step)" }
        return nil
    }
}
