import Testing

@testable import Geo

struct SpatialGridTests {
    let paris = GeoPoint(latitude: 48.8566, longitude: 2.3522)

    @Test func pointExactlyAtTheRadiusIsIncluded() {
        var grid = SpatialGrid<String>()
        for bearing in stride(from: 0.0, to: 360, by: 15) {
            let onEdge = paris.destination(bearing: bearing, distance: 1_000)
            grid.update("edge", to: onEdge)
            let radius = paris.distance(to: onEdge)
            #expect(grid.nearest(to: paris, within: radius, limit: 10).map(\.id) == ["edge"])
            #expect(grid.nearest(to: paris, within: radius.nextDown, limit: 10).isEmpty)
        }
    }

    @Test func pointOneMillimetreBeyondTheRadiusIsExcluded() throws {
        var grid = SpatialGrid<String>()
        grid.update("inside", to: paris.destination(bearing: 40, distance: 999.999))
        grid.update("beyond", to: paris.destination(bearing: 220, distance: 1_000.001))
        let found = grid.nearest(to: paris, within: 1_000, limit: 10)
        try #require(found.map(\.id) == ["inside"])
        #expect(abs(found[0].distance - 999.999) < 1e-6)
    }

    @Test func radiusZeroFindsOnlyTheExactPoint() {
        var grid = SpatialGrid<Int>()
        grid.update(1, to: paris)
        grid.update(2, to: paris.destination(bearing: 0, distance: 0.01))
        #expect(grid.nearest(to: paris, within: 0, limit: 10).map(\.id) == [1])
    }

    @Test func findsNeighboursAcrossTheAntimeridianFromEitherSide() throws {
        var grid = SpatialGrid<String>()
        grid.update("east", to: GeoPoint(latitude: 10, longitude: 179.999))
        grid.update("west", to: GeoPoint(latitude: 10, longitude: -179.999))
        grid.update("far", to: GeoPoint(latitude: 10, longitude: 179.9))

        let fromEast = grid.nearest(to: GeoPoint(latitude: 10, longitude: 179.99), within: 2_000, limit: 10)
        try #require(fromEast.map(\.id) == ["east", "west"])
        #expect(abs(fromEast[1].distance - 1_204.6) < 1)
        let fromWest = grid.nearest(to: GeoPoint(latitude: 10, longitude: -179.99), within: 2_000, limit: 10)
        #expect(fromWest.map(\.id) == ["west", "east"])
        let onTheLine = grid.nearest(to: GeoPoint(latitude: 10, longitude: 180), within: 200, limit: 10)
        #expect(Set(onTheLine.map(\.id)) == ["east", "west"])
        let onTheOtherLine = grid.nearest(to: GeoPoint(latitude: 10, longitude: -180), within: 200, limit: 10)
        #expect(Set(onTheOtherLine.map(\.id)) == ["east", "west"])
    }

    @Test func longitudes180AndMinus180AreTheSamePlace() {
        var grid = SpatialGrid<String>()
        grid.update("plus", to: GeoPoint(latitude: -33, longitude: 180))
        grid.update("minus", to: GeoPoint(latitude: -33, longitude: -180))
        let found = grid.nearest(to: GeoPoint(latitude: -33, longitude: 179.9999), within: 50, limit: 10)
        #expect(Set(found.map(\.id)) == ["plus", "minus"])
        #expect(found.allSatisfy { abs($0.distance - 9.33) < 0.01 })
    }

    @Test func queryAtTheNorthPoleFindsEveryLongitude() {
        var grid = SpatialGrid<Int>()
        let longitudes = Array(stride(from: -180.0, through: 180, by: 15))
        for (id, longitude) in longitudes.enumerated() {
            grid.update(id, to: GeoPoint(latitude: 89.99, longitude: longitude))
        }
        grid.update(999, to: GeoPoint(latitude: 89.9, longitude: 0))  // 11 km away

        let found = grid.nearest(to: GeoPoint(latitude: 90, longitude: 0), within: 2_000, limit: 100)
        #expect(Set(found.map(\.id)) == Set(longitudes.indices))
        #expect(found.allSatisfy { abs($0.distance - 1_111.95) < 0.01 })
        #expect(zip(found, found.dropFirst()).allSatisfy { $0.distance <= $1.distance })

        // From just off the pole, the far side of it is still within reach.
        let offPole = grid.nearest(to: GeoPoint(latitude: 89.995, longitude: 137), within: 2_000, limit: 100)
        #expect(Set(offPole.map(\.id)) == Set(longitudes.indices))
    }

    @Test func queryAtTheSouthPoleFindsEveryLongitude() {
        var grid = SpatialGrid<Int>()
        for id in 0..<36 {
            grid.update(id, to: GeoPoint(latitude: -89.99, longitude: Double(id * 10 - 175)))
        }
        let found = grid.nearest(to: GeoPoint(latitude: -90, longitude: 45), within: 1_200, limit: 36)
        #expect(found.count == 36)
        #expect(grid.nearest(to: GeoPoint(latitude: -90, longitude: 45), within: 1_100, limit: 36).isEmpty)
    }

    @Test func aCellIsVisitedOnceWhenBothEndsOfAWrappedWindowReachIt() {
        // With 250° cells, a window from 57.7° east over the antimeridian to -167.7° starts and
        // ends in the first column: the window must list that column once.
        var grid = SpatialGrid<Int>(cellSizeDegrees: 250)
        // 5 405, 4 607, 2 122, 2 114, 4 502, 4 837 and 12 906 km from the centre.
        let points = [(40.0, 60.0), (40, 70), (40, 100), (45, 150), (50, -178), (45, -175), (0, 0)]
        for (id, (latitude, longitude)) in points.enumerated() {
            grid.update(id, to: GeoPoint(latitude: latitude, longitude: longitude))
        }
        let center = GeoPoint(latitude: 40, longitude: 125)
        let window = SearchWindow(center: center, radius: 5_000_000, layout: grid.index.layout)
        #expect(window.wrappedColumns == nil && window.columns == 0...1)
        let found = grid.nearest(to: center, within: 5_000_000, limit: 100).map(\.id)
        let expected = points.indices.filter {
            center.distance(to: GeoPoint(latitude: points[$0].0, longitude: points[$0].1)) <= 5_000_000
        }
        #expect(expected == [1, 2, 3, 4, 5])
        #expect(found == [3, 2, 4, 1, 5])
    }

    @Test func pointAtThePoleIsFoundFromNearby() {
        var grid = SpatialGrid<String>()
        grid.update("pole", to: GeoPoint(latitude: 90, longitude: 123))
        let found = grid.nearest(to: GeoPoint(latitude: 89.99, longitude: -57), within: 1_200, limit: 1)
        #expect(found.map(\.id) == ["pole"])
    }

    @Test func wholeEarthRadiusFindsEverything() {
        var grid = SpatialGrid<Int>()
        var random = SplitMix64(seed: 11)
        for id in 0..<500 {
            grid.update(id, to: SpatialGridBruteForceTests.randomWorldPoint(using: &random))
        }
        let center = GeoPoint(latitude: 12, longitude: -34)
        let all = grid.nearest(to: center, within: Earth.halfCircumference, limit: 1_000)
        #expect(all.count == 500)
        #expect(zip(all, all.dropFirst()).allSatisfy { $0.distance <= $1.distance })
        #expect(grid.nearest(to: center, within: .infinity, limit: .max).count == 500)
        // 20 000 km is just short of the antipode: only the points in the last 15 km are missed.
        let antipode = GeoPoint(latitude: -12, longitude: 146)
        grid.update(1_000, to: antipode)
        #expect(!grid.nearest(to: center, within: 20_000_000, limit: 1_000).contains { $0.id == 1_000 })
        let farthest = grid.nearest(to: center, within: Earth.halfCircumference, limit: 1_000).last
        #expect(farthest?.id == 1_000)
    }

    @Test func resultsAreNearestFirstAndLimited() {
        var grid = SpatialGrid<Int>()
        for id in 0..<20 {
            grid.update(id, to: paris.destination(bearing: Double(id * 37 % 360), distance: Double(100 * (20 - id))))
        }
        let found = grid.nearest(to: paris, within: 10_000, limit: 5)
        #expect(found.map(\.id) == [19, 18, 17, 16, 15])
        #expect(found.map { ($0.distance / 100).rounded() } == [1, 2, 3, 4, 5])
    }

    @Test func filterSkipsIdsButNotTheirPlaces() {
        var grid = SpatialGrid<Int>()
        for id in 0..<10 {
            grid.update(id, to: paris.destination(bearing: 90, distance: Double(id * 10)))
        }
        let odd = grid.nearest(to: paris, within: 1_000, limit: 3) { $0 % 2 == 1 }
        #expect(odd.map(\.id) == [1, 3, 5])
        #expect(grid.nearest(to: paris, within: 1_000, limit: 3) { _ in false }.isEmpty)
    }

    @Test func tiesFollowInsertionOrderAndMovesKeepTheirPlace() {
        var grid = SpatialGrid<String>()
        for id in ["c", "a", "b"] {
            grid.update(id, to: paris)
        }
        #expect(grid.nearest(to: paris, within: 1, limit: 10).map(\.id) == ["c", "a", "b"])
        grid.update("c", to: GeoPoint(latitude: 0, longitude: 0))
        grid.update("c", to: paris)
        #expect(grid.nearest(to: paris, within: 1, limit: 10).map(\.id) == ["c", "a", "b"])
        grid.remove("a")
        grid.update("a", to: paris)
        #expect(grid.nearest(to: paris, within: 1, limit: 10).map(\.id) == ["c", "b", "a"])
        #expect(grid.nearest(to: paris, within: 1, limit: 2).map(\.id) == ["c", "b"])
    }

    @Test func equalDistancesAreOrderedByLatitudeThenLongitude() {
        var grid = SpatialGrid<String>()
        // Mirror images over the equator and the prime meridian are exactly equally far from (0, 0).
        grid.update("north-east", to: GeoPoint(latitude: 0.001, longitude: 0.002))
        grid.update("south-east", to: GeoPoint(latitude: -0.001, longitude: 0.002))
        grid.update("north-west", to: GeoPoint(latitude: 0.001, longitude: -0.002))
        grid.update("south-west", to: GeoPoint(latitude: -0.001, longitude: -0.002))
        let found = grid.nearest(to: GeoPoint(latitude: 0, longitude: 0), within: 1_000, limit: 10)
        #expect(Set(found.map(\.distance)).count == 1)
        #expect(found.map(\.id) == ["south-west", "south-east", "north-west", "north-east"])
    }

    @Test func updateMovesWithoutDuplicates() {
        var grid = SpatialGrid<String>()
        let london = GeoPoint(latitude: 51.5074, longitude: -0.1278)
        grid.update("driver", to: paris)
        grid.update("driver", to: london)
        #expect(grid.count == 1)
        #expect(grid.occupiedCellCount == 1)
        #expect(grid.position(of: "driver") == london)
        #expect(grid.nearest(to: paris, within: 10_000, limit: 10).isEmpty)
        #expect(grid.nearest(to: london, within: 10, limit: 10).map(\.id) == ["driver"])
        #expect(grid.index.cells[grid.index.layout.cellKey(for: paris)] == nil)
        #expect(grid.invariantViolations == [])

        // A small move inside the cell updates in place.
        let nudged = london.destination(bearing: 0, distance: 5)
        grid.update("driver", to: nudged)
        #expect(grid.position(of: "driver") == nudged)
        #expect(grid.nearest(to: london, within: 10, limit: 10).map(\.distance).first.map { abs($0 - 5) < 1e-6 } == true)
        #expect(grid.count == 1)
        #expect(grid.occupiedCellCount == 1)
    }

    @Test func movingOutOfASharedCellKeepsTheOthersFindable() {
        var grid = SpatialGrid<Int>()
        for id in 0..<5 {
            grid.update(id, to: paris.destination(bearing: 0, distance: Double(id)))
        }
        grid.update(1, to: GeoPoint(latitude: -33.87, longitude: 151.21))
        #expect(grid.invariantViolations == [])
        #expect(grid.nearest(to: paris, within: 100, limit: 10).map(\.id) == [0, 2, 3, 4])
        #expect(grid.occupiedCellCount == 2)
    }

    @Test func removeForgetsTheId() {
        var grid = SpatialGrid<String>()
        grid.update("a", to: paris)
        grid.update("b", to: paris.destination(bearing: 90, distance: 10))
        grid.remove("a")
        grid.remove("never inserted")
        #expect(grid.count == 1)
        #expect(grid.position(of: "a") == nil)
        #expect(grid.nearest(to: paris, within: 100, limit: 10).map(\.id) == ["b"])
        grid.remove("b")
        #expect(grid.count == 0)
        #expect(grid.occupiedCellCount == 0)
        #expect(grid.index.occupiedColumnsByRow.isEmpty)
        #expect(grid.nearest(to: paris, within: 100, limit: 10).isEmpty)
    }

    @Test func countsIdsAndOccupiedCells() {
        var grid = SpatialGrid<Int>(cellSizeDegrees: 1)
        grid.update(1, to: GeoPoint(latitude: 0.5, longitude: 0.5))
        grid.update(2, to: GeoPoint(latitude: 0.7, longitude: 0.2))  // same cell as 1
        grid.update(3, to: GeoPoint(latitude: 1.5, longitude: 0.5))  // the cell to the north
        grid.update(4, to: GeoPoint(latitude: 0.5, longitude: -0.5))  // the cell to the west
        #expect(grid.count == 4)
        #expect(grid.occupiedCellCount == 3)
        grid.remove(1)
        #expect(grid.occupiedCellCount == 3)
        grid.remove(2)
        #expect(grid.occupiedCellCount == 2)
        #expect(grid.count == 2)
    }

    @Test func invalidPointsAreIgnored() {
        var grid = SpatialGrid<String>()
        grid.update("a", to: paris)
        grid.update("a", to: GeoPoint(latitude: .nan, longitude: 0))
        grid.update("b", to: GeoPoint(latitude: 91, longitude: 0))
        #expect(grid.count == 1)
        #expect(grid.position(of: "a") == paris)
    }

    @Test func degenerateQueriesReturnNothing() {
        var grid = SpatialGrid<String>()
        grid.update("a", to: paris)
        #expect(grid.nearest(to: paris, within: 100, limit: 0).isEmpty)
        #expect(grid.nearest(to: paris, within: -1, limit: 10).isEmpty)
        #expect(grid.nearest(to: paris, within: .nan, limit: 10).isEmpty)
        #expect(grid.nearest(to: GeoPoint(latitude: 100, longitude: 0), within: 100, limit: 10).isEmpty)
    }

    @Test func copiesAreIndependent() {
        var original = SpatialGrid<String>()
        original.update("a", to: paris)
        var copy = original
        copy.update("a", to: GeoPoint(latitude: 0, longitude: 0))
        copy.update("b", to: paris)
        #expect(original.position(of: "a") == paris)
        #expect(original.count == 1)
        #expect(copy.count == 2)
    }
}
