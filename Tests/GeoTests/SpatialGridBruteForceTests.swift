import Foundation
import Testing

@testable import Geo

/// `SpatialGrid` against `ReferenceIndex` on seeded random data: a dense city, points all over the
/// world, and deliberately awkward places (near the poles, on both sides of the antimeridian,
/// exact duplicates), before and after a round of moves and removals.
struct SpatialGridBruteForceTests {
    struct Scenario: CustomTestStringConvertible, Sendable {
        let seed: UInt64
        let cellSizeDegrees: Double
        var testDescription: String { "seed \(seed), cells of \(cellSizeDegrees)°" }
    }

    static let scenarios = [
        Scenario(seed: 1, cellSizeDegrees: 0.01),
        Scenario(seed: 2, cellSizeDegrees: 0.01),
        // 360 / 0.37 is not a whole number: the last column is narrower than the others.
        Scenario(seed: 3, cellSizeDegrees: 0.37),
        // Coarse cells: both halves of an antimeridian-crossing window can meet in one column.
        Scenario(seed: 4, cellSizeDegrees: 7),
    ]

    static let cityLatitudes = 48.80...48.92
    static let cityLongitudes = 2.25...2.42

    @Test(arguments: scenarios)
    func matchesBruteForce(_ scenario: Scenario) {
        var random = SplitMix64(seed: scenario.seed)
        var grid = SpatialGrid<Int>(cellSizeDegrees: scenario.cellSizeDegrees)
        var reference = ReferenceIndex()

        var placed: [GeoPoint] = []
        for id in 0..<25_000 {
            let point: GeoPoint
            if id % 50 == 49, let earlier = placed.randomElement(using: &random) {
                point = earlier  // exact duplicates force the tie-break to matter
            } else if id < 20_000 {
                point = Self.randomCityPoint(using: &random)
            } else {
                point = Self.randomWorldPoint(using: &random)
            }
            placed.append(point)
            grid.update(id, to: point)
            reference.update(id, to: point)
        }
        expectSameContents(grid, reference)
        runQueries(35, on: grid, reference, using: &random)

        // Moves within a cell, moves across the world, removals, re-insertions.
        for _ in 0..<3_000 {
            let id = Int.random(in: 0..<25_000, using: &random)
            switch Int.random(in: 0..<4, using: &random) {
            case 0:
                guard let current = reference.entries[id]?.point else { continue }
                let nudged = current.destination(bearing: .random(in: 0..<360, using: &random), distance: 20)
                grid.update(id, to: nudged)
                reference.update(id, to: nudged)
            case 1:
                let point = Self.randomWorldPoint(using: &random)
                grid.update(id, to: point)
                reference.update(id, to: point)
            case 2:
                grid.remove(id)
                reference.remove(id)
            default:
                let point = Self.randomCityPoint(using: &random)
                grid.update(id, to: point)
                reference.update(id, to: point)
            }
        }
        expectSameContents(grid, reference)
        runQueries(35, on: grid, reference, using: &random)
    }

    /// Cells wider than 90°: the two halves of an antimeridian-crossing window can share a
    /// column, and the last column is cut short by the antimeridian.
    @Test(arguments: [45.0, 100, 250])
    func coarseGridsMatchBruteForce(cellSizeDegrees: Double) {
        var random = SplitMix64(seed: UInt64(cellSizeDegrees))
        var grid = SpatialGrid<Int>(cellSizeDegrees: cellSizeDegrees)
        var reference = ReferenceIndex()
        for id in 0..<2_000 {
            let point = Self.randomWorldPoint(using: &random)
            grid.update(id, to: point)
            reference.update(id, to: point)
        }
        expectSameContents(grid, reference)
        runQueries(40, on: grid, reference, using: &random)
    }

    private func runQueries(
        _ count: Int, on grid: SpatialGrid<Int>, _ reference: ReferenceIndex, using random: inout SplitMix64
    ) {
        let filters: [(name: String, include: (Int) -> Bool)] = [
            ("all", { _ in true }),
            ("not multiples of 3", { $0 % 3 != 0 }),
            ("multiples of 7", { $0 % 7 == 0 }),
        ]
        for _ in 0..<count {
            let center: GeoPoint
            switch Int.random(in: 0..<4, using: &random) {
            case 0: center = Self.randomCityPoint(using: &random)
            case 1: center = reference.entries.randomElement(using: &random)!.value.point
            default: center = Self.randomWorldPoint(using: &random)
            }
            let radius = exp(Double.random(in: log(1.0)...log(5_000_000.0), using: &random))
            let limit = Int.random(in: 1...50, using: &random)
            let filter = filters.randomElement(using: &random)!

            let expected = reference.nearest(to: center, within: radius, limit: limit, where: filter.include)
            let actual = grid.nearest(to: center, within: radius, limit: limit, where: filter.include)
            let query = "center \(center), radius \(radius) m, limit \(limit), filter \(filter.name)"
            // One issue per wrong query, naming the first difference, rather than a wall of output.
            guard actual.count == expected.count else {
                Issue.record("\(actual.count) results instead of \(expected.count) for \(query)")
                continue
            }
            let mismatch = zip(actual, expected).enumerated().first { _, pair in
                pair.0.id != pair.1.id || pair.0.point != pair.1.point
                    || abs(pair.0.distance - pair.1.distance) > 1e-9 * max(1, pair.1.distance)
            }
            if let (index, (got, want)) = mismatch {
                Issue.record("result \(index) is \(got), expected \(want), for \(query)")
            }
        }
    }

    private func expectSameContents(_ grid: SpatialGrid<Int>, _ reference: ReferenceIndex) {
        #expect(grid.count == reference.entries.count)
        #expect(grid.invariantViolations == [])
        let expectedCells = Set(reference.entries.values.map { grid.index.layout.cellKey(for: $0.point) })
        #expect(grid.occupiedCellCount == expectedCells.count)
        for (id, entry) in reference.entries where grid.position(of: id) != entry.point {
            Issue.record("position of \(id) is \(String(describing: grid.position(of: id))), expected \(entry.point)")
        }
    }

    static func randomCityPoint(using random: inout SplitMix64) -> GeoPoint {
        GeoPoint(
            latitude: .random(in: cityLatitudes, using: &random),
            longitude: .random(in: cityLongitudes, using: &random)
        )
    }

    /// Uniform over the map, with a fifth of the points on the awkward edges of it.
    static func randomWorldPoint(using random: inout SplitMix64) -> GeoPoint {
        let anyLatitude = Double.random(in: -90...90, using: &random)
        let anyLongitude = Double.random(in: -180...180, using: &random)
        switch Int.random(in: 0..<20, using: &random) {
        case 0: return GeoPoint(latitude: [89.9, -89.9, 89.99, -89.99].randomElement(using: &random)!, longitude: anyLongitude)
        case 1:
            return GeoPoint(latitude: anyLatitude, longitude: [179.99, -179.99, 179.999_999, -179.999_999].randomElement(using: &random)!)
        case 2: return GeoPoint(latitude: [90, -90].randomElement(using: &random)!, longitude: anyLongitude)
        case 3: return GeoPoint(latitude: anyLatitude, longitude: [180, -180].randomElement(using: &random)!)
        default: return GeoPoint(latitude: anyLatitude, longitude: anyLongitude)
        }
    }
}
