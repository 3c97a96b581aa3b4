@testable import Geo

/// The obvious, slow answer to every `SpatialGrid` question: a dictionary and a full scan.
/// Mirrors the grid's documented tie-break (insertion order, kept by moves) independently.
struct ReferenceIndex {
    private(set) var entries: [Int: (point: GeoPoint, sequence: Int)] = [:]
    private var nextSequence = 0

    mutating func update(_ id: Int, to point: GeoPoint) {
        if let existing = entries[id] {
            entries[id] = (point, existing.sequence)
        } else {
            entries[id] = (point, nextSequence)
            nextSequence += 1
        }
    }

    mutating func remove(_ id: Int) {
        entries[id] = nil
    }

    struct Match {
        let id: Int
        let point: GeoPoint
        let distance: Double
        let sequence: Int

        func precedes(_ other: Match) -> Bool {
            if distance != other.distance { return distance < other.distance }
            if point.latitude != other.point.latitude { return point.latitude < other.point.latitude }
            if point.longitude != other.point.longitude { return point.longitude < other.point.longitude }
            return sequence < other.sequence
        }
    }

    /// A full scan into a sorted list of at most `limit` matches (insertion sort: a new match
    /// walks in from the end), which stays quick in a debug build where sorting 20 000 is not.
    func nearest(
        to center: GeoPoint, within radius: Double, limit: Int, where include: (Int) -> Bool
    ) -> [(id: Int, point: GeoPoint, distance: Double)] {
        var best: [Match] = []
        for (id, entry) in entries {
            let distance = center.distance(to: entry.point)
            guard distance <= radius, include(id) else { continue }
            let match = Match(id: id, point: entry.point, distance: distance, sequence: entry.sequence)
            guard best.count < limit || match.precedes(best[best.count - 1]) else { continue }
            var index = best.count
            while index > 0, match.precedes(best[index - 1]) {
                index -= 1
            }
            best.insert(match, at: index)
            if best.count > limit { best.removeLast() }
        }
        return best.map { ($0.id, $0.point, $0.distance) }
    }
}

extension SpatialGrid {
    /// Every internal cross-reference agrees: ids ↔ handles ↔ cell slots, cells ↔ row occupancy,
    /// no empty cells kept.
    var invariantViolations: [String] {
        var problems: [String] = []
        for (id, handle) in handles where ids[handle] != id {
            problems.append("handle \(handle) of \(id) names \(String(describing: ids[handle]))")
        }
        if ids.compactMap({ $0 }).count != handles.count { problems.append("stale ids left behind") }
        let free = Set(index.freeHandles)
        if free.count != index.freeHandles.count { problems.append("a handle freed twice") }
        if free.contains(where: { ids[$0] != nil }) { problems.append("a free handle still has an id") }
        if index.locations.count != ids.count { problems.append("\(index.locations.count) locations for \(ids.count) handles") }

        var entriesSeen = 0
        for (cellKey, entries) in index.cells {
            if entries.isEmpty { problems.append("empty cell \(cellKey) kept") }
            let row = index.layout.row(ofCellKey: cellKey)
            if index.occupiedColumnsByRow[row]?.contains(index.layout.column(ofCellKey: cellKey)) != true {
                problems.append("cell \(cellKey) missing from its row's occupied columns")
            }
            for (slot, entry) in entries.enumerated() {
                entriesSeen += 1
                if index.layout.cellKey(for: entry.point) != cellKey { problems.append("handle \(entry.handle) in the wrong cell") }
                if free.contains(entry.handle) || ids[entry.handle] == nil { problems.append("freed handle \(entry.handle) in a cell") }
                if index.locations[entry.handle] != CellIndex.Location(cellKey: cellKey, slot: slot) {
                    problems.append("handle \(entry.handle) located at \(index.locations[entry.handle]), found at (\(cellKey), \(slot))")
                }
            }
        }
        if entriesSeen != handles.count { problems.append("\(entriesSeen) entries but \(handles.count) ids") }
        let occupiedColumnCount = index.occupiedColumnsByRow.values.reduce(0) { $0 + $1.count }
        if occupiedColumnCount != index.cells.count {
            problems.append("\(occupiedColumnCount) occupied columns for \(index.cells.count) cells")
        }
        if index.occupiedColumnsByRow.values.contains(where: \.isEmpty) { problems.append("empty row set kept") }
        return problems
    }
}
