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
/// Per id: a `Member` in its cell's array (id + point 16 B + sequence 8 B, plus array growth
/// slack) and a `Location` in `locations` (id + 16 B, plus hash-table slack). With a 16-byte id
/// (`UUID`, a short `String`) that is 40 + 32 B of payload, about 110–130 B in practice once the
/// array and hash-table slack is counted; each occupied cell adds about 100 B of fixed overhead
/// (dictionary entries, array header, row set entry), shared by all the ids in the cell.
/// The `String` id's own heap buffer, if longer than 15 UTF-8 bytes, comes on top.
///
/// ## Order of results
/// By distance, then latitude, then longitude, then the order in which the ids were inserted
/// (moving an id keeps its place; removing and re-inserting it puts it last). The order is
/// therefore deterministic for a given history of updates.
public struct SpatialGrid<ID: Hashable & Sendable>: Sendable {
    struct Member: Sendable {
        let id: ID
        var point: GeoPoint
        let sequence: UInt64
    }

    /// Where an id's `Member` lives: its cell, and its index in that cell's array.
    struct Location: Sendable {
        var cellKey: Int
        var slot: Int
    }

    let layout: GridLayout
    /// Occupied cells only; an emptied cell is removed so a long-running index does not leak.
    private(set) var cells: [Int: [Member]] = [:]
    /// Row → the columns of that row which have a cell in `cells`.
    private(set) var occupiedColumnsByRow: [Int: Set<Int>] = [:]
    private(set) var locations: [ID: Location] = [:]
    private var nextSequence: UInt64 = 0

    /// - Parameter cellSizeDegrees: cell height and width. The default 0.01° (about 1.1 km by
    ///   0.7 km at mid latitudes) suits searches of a few km in dense cities; must be ≥ 1e-6.
    public init(cellSizeDegrees: Double = 0.01) {
        layout = GridLayout(cellSizeDegrees: cellSizeDegrees)
    }

    public var cellSizeDegrees: Double {
        layout.cellSizeDegrees
    }

    /// Number of indexed ids.
    public var count: Int {
        locations.count
    }

    /// Number of non-empty cells, for metrics.
    public var occupiedCellCount: Int {
        cells.count
    }

    public func position(of id: ID) -> GeoPoint? {
        guard let location = locations[id] else { return nil }
        return cells[location.cellKey]?[location.slot].point
    }

    /// Inserts `id` at `point`, or moves it there. O(1).
    ///
    /// A point that is not `isValid` is ignored and the id keeps its previous position (if any):
    /// one bad fix from a device must not corrupt the index. Validate input upstream to report it.
    public mutating func update(_ id: ID, to point: GeoPoint) {
        guard point.isValid else { return }
        let cellKey = layout.cellKey(for: point)
        guard let location = locations[id] else {
            attach(Member(id: id, point: point, sequence: nextSequence), to: cellKey)
            nextSequence += 1
            return
        }
        // The common case: a driver a few metres further on, still in the same cell.
        if location.cellKey == cellKey {
            cells[cellKey]![location.slot].point = point
            return
        }
        var member = detach(from: location)
        member.point = point
        attach(member, to: cellKey)
    }

    /// Removes `id`; does nothing if it is not indexed.
    public mutating func remove(_ id: ID) {
        guard let location = locations.removeValue(forKey: id) else { return }
        _ = detach(from: location)
    }

    private mutating func attach(_ member: Member, to cellKey: Int) {
        let slot = Self.append(member, to: &cells[cellKey, default: []])
        locations[member.id] = Location(cellKey: cellKey, slot: slot)
        if slot == 0 {
            occupiedColumnsByRow[layout.row(ofCellKey: cellKey), default: []]
                .insert(layout.column(ofCellKey: cellKey))
        }
    }

    private static func append(_ member: Member, to members: inout [Member]) -> Int {
        members.append(member)
        return members.count - 1
    }

    /// Takes the member out of its cell by moving the cell's last member into its slot, so removal
    /// is O(1) and the cell array stays dense. Leaves `locations[member.id]` to the caller.
    private mutating func detach(from location: Location) -> Member {
        let (removed, movedID, isNowEmpty) = Self.swapRemove(at: location.slot, from: &cells[location.cellKey]!)
        if let movedID {
            locations[movedID]?.slot = location.slot
        }
        if isNowEmpty {
            cells[location.cellKey] = nil
            let row = layout.row(ofCellKey: location.cellKey)
            occupiedColumnsByRow[row]?.remove(layout.column(ofCellKey: location.cellKey))
            if occupiedColumnsByRow[row]?.isEmpty == true {
                occupiedColumnsByRow[row] = nil
            }
        }
        return removed
    }

    private static func swapRemove(
        at slot: Int, from members: inout [Member]
    ) -> (removed: Member, movedID: ID?, isNowEmpty: Bool) {
        let removed = members[slot]
        let last = members.removeLast()
        guard slot < members.count else { return (removed, nil, members.isEmpty) }
        members[slot] = last
        return (removed, last.id, false)
    }
}
