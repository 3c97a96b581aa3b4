/// The fare of a completed ride: base + per km + per minute, never below the minimum, in minor
/// units (cents) so that sums and comparisons are exact. Configured per deployment.
public struct FareSchedule: Sendable, Equatable, Codable {
    public var currency: String
    public var baseCents: Int
    public var perKilometreCents: Int
    public var perMinuteCents: Int
    public var minimumCents: Int

    public init(currency: String = "USD", baseCents: Int = 250, perKilometreCents: Int = 120, perMinuteCents: Int = 30, minimumCents: Int = 500) {
        self.currency = currency
        self.baseCents = baseCents
        self.perKilometreCents = perKilometreCents
        self.perMinuteCents = perMinuteCents
        self.minimumCents = minimumCents
    }

    /// The fare for `metres` driven in `seconds`, rounded to the nearest cent. Negative or
    /// non-finite inputs count as zero (a summary never makes a fare negative).
    public func fareCents(metres: Double, seconds: Double) -> Int {
        let km = metres.isFinite ? max(0, metres) / 1000 : 0
        let minutes = seconds.isFinite ? max(0, seconds) / 60 : 0
        let raw = Double(baseCents) + km * Double(perKilometreCents) + minutes * Double(perMinuteCents)
        return max(minimumCents, Int(raw.rounded()))
    }

    /// The first thing wrong with the schedule, naming the field, or nil.
    public var problem: String? {
        if currency.count != 3 || !currency.allSatisfy({ $0.isUppercase && $0.isASCII }) { return "currency: must be a three-letter code such as USD, got \"\(currency)\"" }
        for (name, value) in [("base", baseCents), ("per_km", perKilometreCents), ("per_minute", perMinuteCents), ("minimum", minimumCents)] where value < 0 {
            return "\(name): must not be negative, got \(value)"
        }
        return nil
    }
}
