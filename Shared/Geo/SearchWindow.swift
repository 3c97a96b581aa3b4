#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The grid cells that can hold a point within `radius` of `center`: a band of rows, and in each
/// row one column range, or two when the circle crosses the antimeridian.
///
/// Every bound is widened by a hair (`relativeSlack`, `slackDegrees`) so that rounding can only
/// make the window too big, never drop a point the exact distance test would accept.
struct SearchWindow {
    let rows: ClosedRange<Int>
    let columns: ClosedRange<Int>
    /// When the circle crosses the antimeridian: its part from -180° eastwards, while `columns`
    /// is then its part up to +180°.
    let wrappedColumns: ClosedRange<Int>?
    let centerRow: Int
    private let centerLatitude: Double
    private let centerLongitude: Double
    private let layout: GridLayout

    static let relativeSlack = 1e-9
    /// About 0.1 mm: far above floating-point noise in degrees, far below anything that matters.
    static let slackDegrees = 1e-9
    /// Closer than this to 1, `asin` amplifies rounding too much to trust, and a circle that
    /// nearly touches a pole spans most longitudes anyway.
    private static let widestTrustedSineRatio = 1 - 1e-6

    init(center: GeoPoint, radius: Double, layout: GridLayout) {
        self.layout = layout
        centerLatitude = center.latitude
        centerLongitude = center.longitude
        let allRows = 0...(layout.rowCount - 1)
        let allColumns = 0...(layout.columnCount - 1)
        let angularRadius = radius / Earth.meanRadius

        let reachDegrees = angularRadius * degreesPerRadian * (1 + Self.relativeSlack) + Self.slackDegrees
        let south = center.latitude - reachDegrees
        let north = center.latitude + reachDegrees
        rows =
            angularRadius >= .pi
            ? allRows
            : layout.row(forLatitude: max(south, -90))...layout.row(forLatitude: min(north, 90))
        centerRow = min(max(layout.row(forLatitude: center.latitude), rows.lowerBound), rows.upperBound)

        // A circle around a pole covers every longitude.
        guard angularRadius < .pi, south > -90, north < 90,
            let halfWidth = Self.longitudeHalfWidth(latitude: center.latitude, angularRadius: angularRadius)
        else {
            columns = allColumns
            wrappedColumns = nil
            return
        }
        let west = center.longitude - halfWidth
        let east = center.longitude + halfWidth
        let split: (ClosedRange<Int>, ClosedRange<Int>)
        if west < -180 {
            split = (
                layout.column(forLongitude: west + 360)...allColumns.upperBound,
                0...layout.column(forLongitude: east)
            )
        } else if east > 180 {
            split = (
                layout.column(forLongitude: west)...allColumns.upperBound,
                0...layout.column(forLongitude: east - 360)
            )
        } else {
            columns = layout.column(forLongitude: west)...layout.column(forLongitude: east)
            wrappedColumns = nil
            return
        }
        // With coarse cells both halves can reach the same column; a cell must be visited once.
        if split.1.upperBound >= split.0.lowerBound - 1 {
            columns = allColumns
            wrappedColumns = nil
        } else {
            columns = split.0
            wrappedColumns = split.1
        }
    }

    /// The largest longitude difference of any point of the circle (the meridians tangent to it),
    /// or nil when the circle reaches so near a pole that all longitudes should be searched.
    private static func longitudeHalfWidth(latitude: Double, angularRadius: Double) -> Double? {
        let sineRatio = sin(angularRadius) / cos(latitude * radiansPerDegree)
        guard sineRatio < widestTrustedSineRatio else { return nil }
        return asin(sineRatio) * degreesPerRadian * (1 + relativeSlack) + slackDegrees
    }

    var columnWidth: Int {
        columns.count + (wrappedColumns?.count ?? 0)
    }

    func containsColumn(_ column: Int) -> Bool {
        columns.contains(column) || (wrappedColumns?.contains(column) ?? false)
    }

    /// A distance no point of `row` can beat: the latitude gap alone, since moving along a meridian
    /// is the shortest way to change latitude.
    func distanceLowerBound(ofRow row: Int) -> Double {
        latitudeGapLowerBound(ofRow: row) * Earth.meanRadius * (1 - Self.relativeSlack)
    }

    /// The smallest latitude difference, in radians, between the centre and any point of `row`.
    func latitudeGapLowerBound(ofRow row: Int) -> Double {
        let southEdge = layout.southEdge(ofRow: row)
        let northEdge = southEdge + layout.cellSizeDegrees
        let gapDegrees = max(southEdge - centerLatitude, centerLatitude - northEdge, 0) - Self.slackDegrees
        return max(gapDegrees, 0) * radiansPerDegree
    }

    /// The smallest longitude difference, in radians (0...π), between the centre and any point of
    /// `column`, going either way round.
    func longitudeGapLowerBound(ofColumn column: Int) -> Double {
        let westEdge = layout.westEdge(ofColumn: column)
        // How far east of the cell's west edge the centre lies, 0..<360.
        var offset = (centerLongitude - westEdge).truncatingRemainder(dividingBy: 360)
        if offset < 0 { offset += 360 }
        guard offset > layout.cellSizeDegrees else { return 0 }
        let gapDegrees = min(offset - layout.cellSizeDegrees, 360 - offset) - Self.slackDegrees
        return max(gapDegrees, 0) * radiansPerDegree
    }

    /// A lower bound of cos(latitude) over `row`: the cosine at the edge farther from the equator.
    func cosLatitudeLowerBound(ofRow row: Int) -> Double {
        let southEdge = layout.southEdge(ofRow: row)
        let northEdge = southEdge + layout.cellSizeDegrees
        let farthestFromEquator = min(max(abs(southEdge), abs(northEdge)) + Self.slackDegrees, 90)
        return max(cos(farthestFromEquator * radiansPerDegree) * (1 - Self.relativeSlack), 0)
    }

    /// The window's columns (both parts across the antimeridian) by their longitude gap to the
    /// centre, nearest first.
    func columnsNearestFirst() -> [Int] {
        var all = Array(columns)
        if let wrappedColumns { all += wrappedColumns }
        let gaps: [(column: Int, gap: Double)] = all.map { ($0, longitudeGapLowerBound(ofColumn: $0)) }
        let sorted = gaps.sorted { (a, b) -> Bool in a.gap != b.gap ? a.gap < b.gap : a.column < b.column }
        return sorted.map { $0.column }
    }

    /// The window's rows in order of `distanceLowerBound`, so a search can stop at the first row
    /// that cannot improve its results.
    func rowsNearestFirst() -> RowsNearestFirst {
        RowsNearestFirst(window: self)
    }
}

struct RowsNearestFirst: IteratorProtocol {
    private let window: SearchWindow
    private var northward: Int
    private var southward: Int

    init(window: SearchWindow) {
        self.window = window
        northward = window.centerRow
        southward = window.centerRow - 1
    }

    mutating func next() -> (row: Int, distanceLowerBound: Double)? {
        let canGoNorth = northward <= window.rows.upperBound
        let canGoSouth = southward >= window.rows.lowerBound
        switch (canGoNorth, canGoSouth) {
        case (false, false):
            return nil
        case (true, false):
            return advanceNorth()
        case (false, true):
            return advanceSouth()
        case (true, true):
            let northBound = window.distanceLowerBound(ofRow: northward)
            let southBound = window.distanceLowerBound(ofRow: southward)
            return northBound <= southBound ? advanceNorth() : advanceSouth()
        }
    }

    private mutating func advanceNorth() -> (row: Int, distanceLowerBound: Double) {
        defer { northward += 1 }
        return (northward, window.distanceLowerBound(ofRow: northward))
    }

    private mutating func advanceSouth() -> (row: Int, distanceLowerBound: Double) {
        defer { southward -= 1 }
        return (southward, window.distanceLowerBound(ofRow: southward))
    }
}
