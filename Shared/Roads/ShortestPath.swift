import Geo

/// The quickest way between two snapped points: on the graph's contraction hierarchy when it has
/// one (`HierarchySearch`), else A* by travel time. A*'s heuristic is a lower bound of the distance
/// to the destination at the graph's top speed, which never overestimates, so the first time the
/// cheapest open entry costs at least the best arrival found, that arrival is optimal.
struct ShortestPath {
    /// The edges between the two partial edges, and which of the start's and end's edges they join.
    struct Result {
        var seconds: Double
        /// Edge indexes in driving order (empty when the route stays on one segment).
        var edges: [Int]
        /// The start's edge the route leaves by, and the end's edge it arrives by; nil, nil when
        /// start and end are on the same segment and the route is just the stretch between them.
        var leave: Int?
        var arrive: Int?
    }

    let graph: RoadGraph
    var hierarchy: ContractionHierarchy? = nil

    func search(from start: Snap, to end: Snap) -> Result? {
        // Leaving: the rest of the start's segment, in each direction the road allows.
        var leaves: [(node: Int, edge: Int, cost: Double)] = []
        if let forward = start.forward { leaves.append((start.b, forward, (1 - start.fraction) * graph.durations[forward])) }
        if let backward = start.backward { leaves.append((start.a, backward, start.fraction * graph.durations[backward])) }
        // Arriving: from a node of the end's segment along the part of it the road allows.
        var arrivals: [(node: Int, edge: Int, cost: Double)] = []
        if let forward = end.forward { arrivals.append((end.a, forward, end.fraction * graph.durations[forward])) }
        if let backward = end.backward { arrivals.append((end.b, backward, (1 - end.fraction) * graph.durations[backward])) }

        var best = Result(seconds: .infinity, edges: [], leave: nil, arrive: nil)
        if start.a == end.a, start.b == end.b {
            if let forward = start.forward, end.fraction >= start.fraction {
                best.seconds = (end.fraction - start.fraction) * graph.durations[forward]
            } else if let backward = start.backward, end.fraction <= start.fraction {
                best.seconds = (start.fraction - end.fraction) * graph.durations[backward]
            }
        }
        if let hierarchy {
            let search = HierarchySearch(hierarchy: hierarchy)
            guard
                let meeting = search.search(
                    starts: leaves.map { ($0.node, $0.cost) }, ends: arrivals.map { ($0.node, $0.cost) }, within: best.seconds)
            else {
                return best.seconds.isFinite ? best : nil  // the stretch along one segment, or no way at all
            }
            best.seconds = meeting.seconds
            best.edges = meeting.edges
            best.leave = leaves.filter { $0.node == meeting.start }.min { $0.cost < $1.cost }?.edge
            best.arrive = arrivals.filter { $0.node == meeting.end }.min { $0.cost < $1.cost }?.edge
            return best
        }
        // A*: its state is as large as the graph (a town's, where that costs nothing).
        let count = graph.points.count
        var seconds = [Double](repeating: .infinity, count: count)
        var via = [Int32](repeating: -1, count: count)
        var open = MinHeap<(cost: Double, node: Int32)>()
        let target = DistanceTarget(graph: graph, point: end.point)
        for leave in leaves where leave.cost < seconds[leave.node] {
            seconds[leave.node] = leave.cost
            open.push(leave.cost + target.seconds(from: graph.points[leave.node]), (leave.cost, Int32(leave.node)))
        }
        var bestArrival: (node: Int, edge: Int)?
        while let (estimate, (here, node32)) = open.pop() {
            if estimate >= best.seconds { break }
            let node = Int(node32)
            // A stale entry: the node was reached more cheaply after this one was pushed.
            if here > seconds[node] { continue }
            for arrival in arrivals where arrival.node == node && here + arrival.cost < best.seconds {
                best.seconds = here + arrival.cost
                bestArrival = (node, arrival.edge)
            }
            for edge in graph.edges(from: node) {
                let next = Int(graph.edges[edge].to)
                let cost = here + graph.durations[edge]
                if cost < seconds[next] {
                    seconds[next] = cost
                    via[next] = Int32(edge)
                    open.push(cost + target.seconds(from: graph.points[next]), (cost, Int32(next)))
                }
            }
        }
        guard best.seconds.isFinite else { return nil }
        guard let bestArrival else { return best }  // the stretch along one segment was quickest
        var node = bestArrival.node
        while via[node] >= 0 {
            let edge = Int(via[node])
            best.edges.append(edge)
            node = Int(graph.edges[edge].from)
        }
        best.edges.reverse()
        best.leave = leaves.first { $0.node == node }?.edge
        best.arrive = bestArrival.edge
        return best
    }
}

/// The heuristic: seconds to `point` at the graph's top speed, over a lower bound of the distance.
private struct DistanceTarget {
    let graph: RoadGraph
    let point: GeoPoint

    func seconds(from other: GeoPoint) -> Double { graph.lowerBound(other, point) / graph.maxSpeed }
}
