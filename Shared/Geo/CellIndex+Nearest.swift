extension CellIndex {
    /// The search behind `SpatialGrid.nearest`, on handles; `include` gets handles too.
    @usableFromInline
    func nearest(
        to center: GeoPoint, within radius: Double, limit: Int, where include: (Int) -> Bool
    ) -> [Candidate] {
        guard limit > 0, radius >= 0, center.isValid, !cells.isEmpty else { return [] }
        var search = NearestSearch(center: center, radius: radius, limit: limit, layout: layout)
        var rows = search.window.rowsNearestFirst()
        // A city-sized window spans a few columns: visiting them nearest first fills the results
        // with near points at once, so the cell test then skips most farther cells unread.
        let columnsNearestFirst = search.window.columnWidth <= Self.sortedColumnsLimit ? search.window.columnsNearestFirst() : nil
        while let (row, distanceLowerBound) = rows.next() {
            // Rows come nearest first: once no point of this row can beat the worst kept result,
            // no later row can either. This keeps huge-radius, small-limit searches cheap.
            if search.best.isFull, distanceLowerBound > search.best.worstDistance { break }
            guard let occupiedColumns = occupiedColumnsByRow[row] else { continue }
            let rowBounds = search.bounds(ofRow: row)
            if search.window.columnWidth > occupiedColumns.count {
                for column in occupiedColumns where search.window.containsColumn(column) {
                    visit(row: row, column: column, rowBounds, &search, include)
                }
            } else if let columnsNearestFirst {
                for column in columnsNearestFirst {
                    // Columns come nearest first: past the first out of reach, all are.
                    guard visit(row: row, column: column, rowBounds, &search, include) else { break }
                }
            } else {
                for column in search.window.columns {
                    visit(row: row, column: column, rowBounds, &search, include)
                }
                if let wrappedColumns = search.window.wrappedColumns {
                    for column in wrappedColumns {
                        visit(row: row, column: column, rowBounds, &search, include)
                    }
                }
            }
        }
        return search.best.sorted()
    }

    /// Windows up to this many columns wide are walked nearest column first (sorting costs little
    /// next to reading the cells); wider ones, rare and already bounded, in plain order.
    static let sortedColumnsLimit = 64

    /// Considers the points of one cell; false when the whole cell is out of reach.
    @inline(__always) @discardableResult
    private func visit(
        row: Int, column: Int, _ rowBounds: RowBounds, _ search: inout NearestSearch, _ include: (Int) -> Bool
    ) -> Bool {
        // The whole cell is out of reach: skip it without looking it up.
        guard
            !search.pruning.isSurelyBeyond(
                latitudeGap: rowBounds.latitudeGap,
                longitudeGap: search.window.longitudeGapLowerBound(ofColumn: column),
                cosLatitude: rowBounds.cosLatitude
            )
        else { return false }
        guard let entries = cells[layout.cellKey(row: row, column: column)] else { return true }
        for entry in entries {
            search.consider(entry, cosLatitude: rowBounds.cosLatitude, include)
        }
        return true
    }
}

/// What a search knows about a row's points before looking at them.
struct RowBounds {
    let latitudeGap: Double
    let cosLatitude: Double
}

/// The state of one search: the window, the best candidates so far, and the cheap test that
/// spares most points an exact distance.
struct NearestSearch {
    let window: SearchWindow
    let origin: DistanceOrigin
    let radius: Double
    var best: NearestCandidates
    var pruning: HaversinePruning

    init(center: GeoPoint, radius: Double, limit: Int, layout: GridLayout) {
        window = SearchWindow(center: center, radius: radius, layout: layout)
        origin = DistanceOrigin(center)
        self.radius = radius
        best = NearestCandidates(limit: limit)
        pruning = HaversinePruning(center: origin, threshold: radius)
    }

    func bounds(ofRow row: Int) -> RowBounds {
        RowBounds(
            latitudeGap: window.latitudeGapLowerBound(ofRow: row),
            cosLatitude: window.cosLatitudeLowerBound(ofRow: row)
        )
    }

    @inline(__always)
    mutating func consider(_ entry: CellIndex.Entry, cosLatitude: Double, _ include: (Int) -> Bool) {
        let point = entry.point
        let gaps = origin.gaps(toLatitude: point.latitude, longitude: point.longitude)
        guard !pruning.isSurelyBeyond(latitudeGap: gaps.latitude, longitudeGap: gaps.longitude, cosLatitude: cosLatitude)
        else { return }
        let distance = origin.distance(toLatitude: point.latitude, longitude: point.longitude)
        guard distance <= radius else { return }
        let candidate = Candidate(handle: entry.handle, point: point, distance: distance, sequence: entry.sequence)
        guard best.wouldAccept(candidate), include(entry.handle) else { return }
        best.insert(candidate)
        if best.isFull {
            pruning.tighten(to: best.worstDistance)
        }
    }
}
