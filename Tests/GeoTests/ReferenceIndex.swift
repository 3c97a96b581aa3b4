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
    /// Every internal cross-reference agrees: ids ↔ cell slots, cells ↔ row occupancy, no empty cells.
    var invariantViolations: [String] {
        var problems: [String] = []
        var membersSeen = 0
        for (cellKey, members) in cells {
            if members.isEmpty { problems.append("empty cell \(cellKey) kept") }
            let row = layout.row(ofCellKey: cellKey)
            if occupiedColumnsByRow[row]?.contains(layout.column(ofCellKey: cellKey)) != true {
                problems.append("cell \(cellKey) missing from its row's occupied columns")
            }
            for (slot, member) in members.enumerated() {
                membersSeen += 1
                if layout.cellKey(for: member.point) != cellKey { problems.append("\(member.id) in the wrong cell") }
                let location = locations[member.id]
                if location?.cellKey != cellKey || location?.slot != slot {
                    problems.append("\(member.id) location \(String(describing: location)) ≠ (\(cellKey), \(slot))")
                }
            }
        }
        if membersSeen != locations.count { problems.append("\(membersSeen) members but \(locations.count) locations") }
        let occupiedColumnCount = occupiedColumnsByRow.values.reduce(0) { $0 + $1.count }
        if occupiedColumnCount != cells.count { problems.append("\(occupiedColumnCount) occupied columns for \(cells.count) cells") }
        if occupiedColumnsByRow.values.contains(where: \.isEmpty) { problems.append("empty row set kept") }
        return problems
    }
}
