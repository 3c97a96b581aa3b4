import Geo

/// Routes on a road graph held in memory (docs/roads.md): each end snaps to the nearest point of
/// the nearest road within `snappingDistance`, then the quickest way is found by travel time, one-way
/// streets respected: on the graph's contraction hierarchy when given one (a metropolitan graph),
/// else by A*. No I/O and no shared mutable state: any number of tasks may route at once.
public struct EmbeddedRoutes: RouteProvider {
    public let graph: RoadGraph
    /// Metres: a point farther than this from every road is `.outsideRoadData`.
    public let snappingDistance: Double
    /// Nil: A* alone, quick enough on a town's graph.
    public let hierarchy: ContractionHierarchy?
    private let index: EdgeIndex

    public var name: String { "embedded" }

    public init(graph: RoadGraph, hierarchy: ContractionHierarchy? = nil, snappingDistance: Double = 300) {
        self.graph = graph
        self.hierarchy = hierarchy
        self.snappingDistance = snappingDistance
        index = EdgeIndex(graph: graph)
    }

    /// The provider on the built-in central Helsinki graph.
    public static func helsinki() throws(RoadGraphError) -> EmbeddedRoutes {
        EmbeddedRoutes(graph: try RoadGraph.helsinki())
    }

    public func route(from start: GeoPoint, to end: GeoPoint) async throws(RouteError) -> Route {
        try shortestRoute(from: start, to: end)
    }

    /// The same, synchronously: the work is all in memory (for benchmarks and synchronous callers).
    public func shortestRoute(from start: GeoPoint, to end: GeoPoint) throws(RouteError) -> Route {
        guard let origin = index.snap(start, within: snappingDistance) else { throw .outsideRoadData(start) }
        guard let destination = index.snap(end, within: snappingDistance) else { throw .outsideRoadData(end) }
        guard let path = ShortestPath(graph: graph, hierarchy: hierarchy).search(from: origin, to: destination) else {
            throw .unroutable(from: start, to: end)
        }
        return assemble(path, from: origin, to: destination)
    }

    /// The line and steps: the start's partial edge, the edges, the end's partial edge.
    private func assemble(_ path: ShortestPath.Result, from origin: Snap, to destination: Snap) -> Route {
        var builder = RouteBuilder(start: origin.point)
        guard let leave = path.leave, let arrive = path.arrive else {
            // Start and end on one segment: the stretch between them, in the direction allowed.
            let stretch = abs(destination.fraction - origin.fraction)
            let edge = destination.fraction >= origin.fraction ? origin.forward : origin.backward
            if let edge { builder.add(destination.point, graph.edges[edge], share: stretch, graph: graph) }
            return builder.route(end: destination.point)
        }
        let leaving = graph.edges[leave]
        let leftShare = leave == origin.forward ? 1 - origin.fraction : origin.fraction
        builder.add(graph.points[Int(leaving.to)], leaving, share: leftShare, graph: graph)
        for edge in path.edges {
            let road = graph.edges[edge]
            builder.add(graph.points[Int(road.to)], road, share: 1, graph: graph)
        }
        let arriving = graph.edges[arrive]
        let arrivedShare = arrive == destination.forward ? destination.fraction : 1 - destination.fraction
        builder.add(destination.point, arriving, share: arrivedShare, graph: graph)
        return builder.route(end: destination.point)
    }
}

/// Collects the line's points and the steps, one per run of edges with the same street name.
private struct RouteBuilder {
    private var points: [GeoPoint]
    private var steps: [RouteStep] = []
    private var distance = 0.0
    private var duration = 0.0

    init(start: GeoPoint) { points = [start] }

    /// Drives `share` of `edge` (0...1), ending at `point`.
    mutating func add(_ point: GeoPoint, _ edge: RoadGraph.Edge, share: Double, graph: RoadGraph) {
        // A snapped end exactly on a node leaves a zero-length piece: nothing to drive or draw.
        guard share > 0, edge.length > 0 else { return }
        let (metres, seconds) = (edge.length * share, edge.duration * share)
        let name = graph.name(of: edge)
        if let last = steps.indices.last, steps[last].name == name {
            steps[last].distance += metres
            steps[last].duration += seconds
        } else {
            steps.append(RouteStep(name: name, distance: metres, duration: seconds, startIndex: points.count - 1))
        }
        points.append(point)
        distance += metres
        duration += seconds
    }

    func route(end: GeoPoint) -> Route {
        var points = points
        var steps = steps
        if points.count < 2 { points.append(end) }  // start and end snapped to the same point
        if steps.isEmpty { steps = [RouteStep(name: nil, distance: 0, duration: 0, startIndex: 0)] }
        return Route(line: Polyline(points: points), distance: distance, duration: duration, steps: steps, kind: .road)
    }
}
