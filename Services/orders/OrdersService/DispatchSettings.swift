import Foundation

/// Where new orders are offered: to the `drivers` nearest available drivers within `radius` metres.
public struct DispatchSettings: Sendable, Equatable {
    public var radius: Double = 3000
    public var drivers: Int = 3
    /// An offer nobody accepted within this many seconds expires; the next round looks 1.5 times
    /// farther (up to 5 rounds) at drivers not yet asked.
    public var offerTimeout: Double = 15
    /// A `NEW` order nobody accepted within this many seconds of its booking ends `CANCELLED`
    /// with reason `no_driver_found` (the rider is told, and may book again).
    public var searchTimeout: Double = 180
    public var maxRounds = 5
    public init() {}

    /// The search radius of round `round` (1 for the first offer).
    public func radius(round: Int) -> Double { radius * pow(1.5, Double(max(0, min(round, maxRounds) - 1))) }
}
