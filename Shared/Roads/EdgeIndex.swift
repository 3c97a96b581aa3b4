import Geo

#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Where a point meets the road network: the nearest point on the nearest road segment, and the
/// edges that run along that segment in each direction.
struct Snap: Sendable {
    /// The segment's two ends: `fraction` 0 is at `a`, 1 at `b`.
    var a: Int
    var b: Int
    var fraction: Double
    var point: GeoPoint
    /// Metres from the asked point to `point`.
    var distance: Double
    /// The quickest edge a → b and b → a, where the road allows that direction.
    var forward: Int?
    var backward: Int?
}

/// A uniform grid of road segments in a local flat projection, for `snap`. A city's graph spans a
/// few kilometres, where an equirectangular projection is within a fraction of a metre of the
/// sphere; the final distance is measured on the sphere anyway.
struct EdgeIndex: Sendable {
    /// Metres: 100, or more for a graph so wide that the grid would pass `maxCells`.
    private let cellSize: Double
    private static let maxCells = 1 << 18

    private let graph: RoadGraph
    private let origin: GeoPoint
    private let metresPerDegreeLatitude: Double
    private let metresPerDegreeLongitude: Double
    private let xs: [Double]
    private let ys: [Double]
    private let columns: Int
    private let rows: Int
    /// Segments (as an `(a, b)` pair of nodes) of cell c: `segments[cellStart[c]..<cellStart[c + 1]]`.
    private let cellStart: [Int]
    private let segments: [(a: Int32, b: Int32)]

    init(graph: RoadGraph) {
        self.graph = graph
        let latitudes = graph.points.map(\.latitude)
        let longitudes = graph.points.map(\.longitude)
        origin = GeoPoint(latitude: latitudes.min() ?? 0, longitude: longitudes.min() ?? 0)
        metresPerDegreeLatitude = Earth.meanRadius * .pi / 180
        let middle = ((latitudes.min() ?? 0) + (latitudes.max() ?? 0)) / 2
        metresPerDegreeLongitude = metresPerDegreeLatitude * cos(middle * .pi / 180)
        let (originLatitude, originLongitude, ky, kx) = (
            origin.latitude, origin.longitude, metresPerDegreeLatitude, metresPerDegreeLongitude
        )
        xs = longitudes.map { ($0 - originLongitude) * kx }
        ys = latitudes.map { ($0 - originLatitude) * ky }
        let (width, height) = (xs.max() ?? 0, ys.max() ?? 0)
        let cellSize = max(100, (width * height / Double(Self.maxCells)).squareRoot() * 1.1, (width + height) / Double(Self.maxCells) * 2)
        self.cellSize = cellSize
        columns = Int(width / cellSize) + 1
        rows = Int(height / cellSize) + 1
        // One segment per pair of nodes, whichever directions the road allows.
        var pairs: [(a: Int32, b: Int32)] = []
        for edge in graph.edges where edge.from < edge.to || graph.edge(from: Int(edge.to), to: Int(edge.from)) == nil {
            if let last = pairs.last, last == (edge.from, edge.to) { continue }
            pairs.append((edge.from, edge.to))
        }
        var buckets = [[Int]](repeating: [], count: columns * rows)
        for (index, pair) in pairs.enumerated() {
            let (a, b) = (Int(pair.a), Int(pair.b))
            let columnRange = Int(min(xs[a], xs[b]) / cellSize)...Int(max(xs[a], xs[b]) / cellSize)
            let rowRange = Int(min(ys[a], ys[b]) / cellSize)...Int(max(ys[a], ys[b]) / cellSize)
            for row in rowRange { for column in columnRange { buckets[row * columns + column].append(index) } }
        }
        cellStart = buckets.reduce(into: [0]) { $0.append($0[$0.count - 1] + $1.count) }
        segments = buckets.flatMap { $0.map { pairs[$0] } }
    }

    private func cell(_ metres: Double) -> Int { Int(max(min(metres / cellSize, 1e9), -1e9)) }

    /// The nearest point on any road within `limit` metres of `point`, or nil.
    func snap(_ point: GeoPoint, within limit: Double) -> Snap? {
        guard point.isValid, !graph.points.isEmpty else { return nil }
        let x = (point.longitude - origin.longitude) * metresPerDegreeLongitude
        let y = (point.latitude - origin.latitude) * metresPerDegreeLatitude
        // Generous in the projection; the sphere has the last word below.
        let reach = limit * 1.01 + 1
        guard x > -reach, y > -reach, x < Double(columns) * cellSize + reach, y < Double(rows) * cellSize + reach else { return nil }
        let clampedColumn = min(max(cell(x), 0), columns - 1)
        let clampedRow = min(max(cell(y), 0), rows - 1)
        var best: (a: Int, b: Int, fraction: Double, squared: Double)?
        // Rings of cells outwards, until a ring cannot hold anything nearer than the best so far.
        // Bounded by the grid too: past its size every cell has been seen (and `limit` may be huge).
        let maxRing = min(Int(min(reach / cellSize, 1e9)), max(rows, columns)) + 1
        for ring in 0...maxRing {
            if let best, best.squared.squareRoot() <= Double(ring - 1) * cellSize { break }
            for row in max(clampedRow - ring, 0)...min(clampedRow + ring, rows - 1) {
                let onEdgeRow = row == clampedRow - ring || row == clampedRow + ring
                let columnRange = max(clampedColumn - ring, 0)...min(clampedColumn + ring, columns - 1)
                let step = onEdgeRow ? 1 : 2 * ring
                for column in stride(from: clampedColumn - ring, through: clampedColumn + ring, by: step) where columnRange.contains(column)
                {
                    let cell = row * columns + column
                    for segment in segments[cellStart[cell]..<cellStart[cell + 1]] {
                        let (fraction, squared) = nearest(x, y, Int(segment.a), Int(segment.b))
                        if squared < best?.squared ?? .infinity { best = (Int(segment.a), Int(segment.b), fraction, squared) }
                    }
                }
            }
        }
        guard let best else { return nil }
        let (start, end) = (graph.points[best.a], graph.points[best.b])
        let snapped = GeoPoint(
            latitude: start.latitude + (end.latitude - start.latitude) * best.fraction,
            longitude: start.longitude + (end.longitude - start.longitude) * best.fraction)
        let distance = point.distance(to: snapped)
        guard distance <= limit else { return nil }
        return Snap(
            a: best.a, b: best.b, fraction: best.fraction, point: snapped, distance: distance,
            forward: graph.edge(from: best.a, to: best.b), backward: graph.edge(from: best.b, to: best.a))
    }

    /// Where on segment a–b the point (x, y) is nearest: the fraction along it and the squared distance.
    private func nearest(_ x: Double, _ y: Double, _ a: Int, _ b: Int) -> (Double, Double) {
        let (dx, dy) = (xs[b] - xs[a], ys[b] - ys[a])
        let lengthSquared = dx * dx + dy * dy
        let raw = lengthSquared > 0 ? ((x - xs[a]) * dx + (y - ys[a]) * dy) / lengthSquared : 0
        let fraction = min(max(raw, 0), 1)
        let (px, py) = (xs[a] + dx * fraction - x, ys[a] + dy * fraction - y)
        return (fraction, px * px + py * py)
    }
}
