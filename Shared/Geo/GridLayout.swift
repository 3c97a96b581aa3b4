/// How `SpatialGrid` cuts the globe into cells: rows of equal latitude height stacked from the
/// south pole, columns of equal longitude width from the antimeridian eastwards.
struct GridLayout: Sendable {
    let cellSizeDegrees: Double
    let rowCount: Int
    let columnCount: Int

    /// The smallest accepted cell (about 11 cm); it keeps `columnCount` under 2³¹, so a row and a
    /// column pack into one `Int` key without collisions.
    static let minimumCellSizeDegrees = 1e-6

    init(cellSizeDegrees: Double) {
        precondition(
            cellSizeDegrees.isFinite && cellSizeDegrees >= Self.minimumCellSizeDegrees,
            "SpatialGrid cell size must be a finite number of degrees ≥ \(Self.minimumCellSizeDegrees)"
        )
        self.cellSizeDegrees = cellSizeDegrees
        rowCount = max(1, Int((180 / cellSizeDegrees).rounded(.up)))
        columnCount = max(1, Int((360 / cellSizeDegrees).rounded(.up)))
    }

    /// Latitude 90 would start a row of its own; it is clamped into the last row instead.
    func row(forLatitude latitude: Double) -> Int {
        min(max(Int(((latitude + 90) / cellSizeDegrees).rounded(.down)), 0), rowCount - 1)
    }

    /// Longitude 180 is clamped into the last column, so -180 and 180 (one meridian) sit at the two
    /// ends of a row; searches that cross the antimeridian visit both ends.
    func column(forLongitude longitude: Double) -> Int {
        min(max(Int(((longitude + 180) / cellSizeDegrees).rounded(.down)), 0), columnCount - 1)
    }

    func cellKey(row: Int, column: Int) -> Int {
        row << 32 | column
    }

    func cellKey(for point: GeoPoint) -> Int {
        cellKey(row: row(forLatitude: point.latitude), column: column(forLongitude: point.longitude))
    }

    func row(ofCellKey key: Int) -> Int {
        key >> 32
    }

    func column(ofCellKey key: Int) -> Int {
        key & 0xFFFF_FFFF
    }

    func southEdge(ofRow row: Int) -> Double {
        Double(row) * cellSizeDegrees - 90
    }

    func westEdge(ofColumn column: Int) -> Double {
        Double(column) * cellSizeDegrees - 180
    }
}
