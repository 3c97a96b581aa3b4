/// An in-memory index of the latest position of each id (drivers, devices), answering
/// "the nearest N within R metres" — the Nearby search of the tracking service.
///
/// ## Why a uniform latitude/longitude grid
/// Positions change every few seconds per driver while searches are comparatively rare, so
/// updates must be cheap. A grid cell is a pure function of the coordinates: an update is a hash
/// lookup and an append or in-place write, O(1), with no tree to rebalance (R-tree, k-d tree)
/// and no cell hierarchy to maintain. A search reads a handful of contiguous cell arrays, which
/// is cache-friendly. Geohash prefixes give the same cells with string keys, and cost more to
/// compute and compare; S2 cells keep their area nearly constant all over the globe, but need a
/// cube projection and a region coverer for every update and search — a lot of machinery that a
/// fleet in a few cities does not need.
///
/// The price of the plain grid is the longitude squeeze: towards the poles a row holds the same
/// number of ever narrower cells, so a circle there (or any huge circle) spans thousands of
/// columns. Cells are stored sparsely, and each row records its occupied columns; when a search
/// would span more columns of a row than that row has occupied cells, it walks the occupied ones
/// instead. The cost of a search is thus bounded by the occupied cells, never by the empty globe.
///
/// ## Memory
/// Per id: a 32-byte entry in its cell's array (point, handle, insertion number), a 16-byte
/// location per handle, the id in a handle-indexed array, and an id → handle dictionary entry.
/// Arrays and hash tables grow by doubling, so the total depends on where the count sits between
/// two powers of two: measured 100–130 bytes per point with `Int` ids and about 150 with `UUID`
/// ids (100 000 and 1 000 000 points in one city, release build). A `String` id longer than 15
/// UTF-8 bytes adds its own heap buffer (about 250 bytes per point with UUID strings). Each
/// occupied cell adds roughly 100 bytes (dictionary entries, array header, row set entry),
/// shared by all the ids in it.
///
/// ## Order of results
/// By distance, then latitude, then longitude, then the order in which the ids were inserted
/// (moving an id keeps its place; removing and re-inserting it puts it last). The order is
/// therefore deterministic for a given history of updates.
///
/// The public methods are `@inlinable` so that they are specialised for the caller's id type;
/// the work itself happens in the non-generic `CellIndex`.
public struct SpatialGrid<ID: Hashable & Sendable>: Sendable {
    @usableFromInline var index: CellIndex
    @usableFromInline var handles: [ID: Int] = [:]
    /// Indexed by handle; nil for the handles of removed ids.
    @usableFromInline var ids: [ID?] = []

    /// - Parameter cellSizeDegrees: cell height and width. The default 0.01° (about 1.1 km by
    ///   0.7 km at mid latitudes) suits searches of a few km in dense cities; must be ≥ 1e-6.
    public init(cellSizeDegrees: Double = 0.01) {
        index = CellIndex(cellSizeDegrees: cellSizeDegrees)
    }

    public var cellSizeDegrees: Double {
        index.layout.cellSizeDegrees
    }

    /// Number of indexed ids.
    @inlinable
    public var count: Int {
        handles.count
    }

    /// Number of non-empty cells, for metrics.
    @inlinable
    public var occupiedCellCount: Int {
        index.occupiedCellCount
    }

    @inlinable
    public func position(of id: ID) -> GeoPoint? {
        handles[id].map { index.point(of: $0) }
    }

    /// Inserts `id` at `point`, or moves it there. O(1).
    ///
    /// A point that is not `isValid` is ignored and the id keeps its previous position (if any):
    /// one bad fix from a device must not corrupt the index. Validate input upstream to report it.
    @inlinable
    public mutating func update(_ id: ID, to point: GeoPoint) {
        guard point.isValid else { return }
        if let handle = handles[id] {
            index.move(handle, to: point)
            return
        }
        let handle = index.insert(point)
        if handle == ids.count {
            ids.append(id)
        } else {
            ids[handle] = id
        }
        handles[id] = handle
    }

    /// Removes `id`; does nothing if it is not indexed.
    @inlinable
    public mutating func remove(_ id: ID) {
        guard let handle = handles.removeValue(forKey: id) else { return }
        index.remove(handle)
        ids[handle] = nil
    }

    /// Every indexed point within `radius` metres of `center` (inclusive, by
    /// `GeoPoint.distance(to:)`) whose id passes `include`, nearest first, at most `limit` of them.
    ///
    /// Correct across the antimeridian, at and around the poles, and for any radius up to the whole
    /// Earth. Ties are ordered as described on `SpatialGrid`. `include` is called only for
    /// candidates inside the circle that would make the current best `limit`, so an expensive
    /// filter (availability, vehicle type) runs for few ids. An invalid `center`, a negative or
    /// NaN `radius`, or a `limit` below 1 yields no results.
    @inlinable
    public func nearest(
        to center: GeoPoint,
        within radius: Double,
        limit: Int,
        where include: (ID) -> Bool = { _ in true }
    ) -> [(id: ID, point: GeoPoint, distance: Double)] {
        let found = index.nearest(to: center, within: radius, limit: limit) { handle in include(ids[handle]!) }
        return found.map { (id: ids[$0.handle]!, point: $0.point, distance: $0.distance) }
    }
}
