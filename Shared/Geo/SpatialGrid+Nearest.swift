extension SpatialGrid {
    /// Every indexed point within `radius` metres of `center` (inclusive, by
    /// `GeoPoint.distance(to:)`) whose id passes `include`, nearest first, at most `limit` of them.
    ///
    /// Correct across the antimeridian, at and around the poles, and for any radius up to the whole
    /// Earth. Ties are ordered as described on `SpatialGrid`. `include` is called only for
    /// candidates inside the circle that would make the current best `limit`, so an expensive
    /// filter (availability, vehicle type) runs for few ids. An invalid `center`, a negative or
    /// NaN `radius`, or a `limit` below 1 yields no results.
    public func nearest(
        to center: GeoPoint,
        within radius: Double,
        limit: Int,
        where include: (ID) -> Bool = { _ in true }
    ) -> [(id: ID, point: GeoPoint, distance: Double)] {
        guard limit > 0, radius >= 0, center.isValid, !cells.isEmpty else { return [] }
        var search = NearestSearch<ID>(center: center, radius: radius, limit: limit, layout: layout)
        var rows = search.window.rowsNearestFirst()
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
        return search.best.sorted().map { (id: $0.id, point: $0.point, distance: $0.distance) }
    }

    @inline(__always)
    private func visit(
        row: Int, column: Int, _ rowBounds: RowBounds, _ search: inout NearestSearch<ID>, _ include: (ID) -> Bool
    ) {
        guard let members = cells[layout.cellKey(row: row, column: column)] else { return }
        // The whole cell is out of reach: skip it without looking at its points.
        guard !search.pruning.isSurelyBeyond(
            latitudeGap: rowBounds.latitudeGap,
            longitudeGap: search.window.longitudeGapLowerBound(ofColumn: column),
            cosLatitude: rowBounds.cosLatitude
        ) else { return }
        for member in members {
            search.consider(member, cosLatitude: rowBounds.cosLatitude, include)
        }
    }
}

/// What a search knows about a row's points before looking at them.
struct RowBounds {
    let latitudeGap: Double
    let cosLatitude: Double
}

/// The state of one `nearest` call: the window, the best candidates so far, and the cheap test
/// that keeps most points from needing an exact distance.
struct NearestSearch<ID: Hashable & Sendable> {
    let window: SearchWindow
    let origin: DistanceOrigin
    let radius: Double
    var best: NearestCandidates<ID>
    var pruning: HaversinePruning

    init(center: GeoPoint, radius: Double, limit: Int, layout: GridLayout) {
        window = SearchWindow(center: center, radius: radius, layout: layout)
        origin = DistanceOrigin(center)
        self.radius = radius
        best = NearestCandidates(limit: limit)
        pruning = HaversinePruning(center: origin, threshold: radius)
    }

    func bounds(ofRow row: Int) -> RowBounds {
        RowBounds(latitudeGap: window.latitudeGapLowerBound(ofRow: row), cosLatitude: window.cosLatitudeLowerBound(ofRow: row))
    }

    @inline(__always)
    mutating func consider(_ member: SpatialGrid<ID>.Member, cosLatitude: Double, _ include: (ID) -> Bool) {
        let gaps = origin.gaps(toLatitude: member.point.latitude, longitude: member.point.longitude)
        guard !pruning.isSurelyBeyond(latitudeGap: gaps.latitude, longitudeGap: gaps.longitude, cosLatitude: cosLatitude)
        else { return }
        let distance = origin.distance(toLatitude: member.point.latitude, longitude: member.point.longitude)
        guard distance <= radius else { return }
        let candidate = Candidate(id: member.id, point: member.point, distance: distance, sequence: member.sequence)
        guard best.wouldAccept(candidate), include(member.id) else { return }
        best.insert(candidate)
        if best.isFull {
            pruning.tighten(to: best.worstDistance)
        }
    }
}
