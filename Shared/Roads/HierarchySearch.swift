/// The quickest path on a `ContractionHierarchy` between weighted start and end nodes (a snapped
/// point lies between two nodes, each some seconds away): a forward search up from the starts and
/// a backward search up from the ends, taken in turn by their cheapest open entry, each stopping
/// once that entry costs at least the best meeting found. Its state is in dictionaries: a query
/// touches a few hundred nodes, whatever the size of the graph.
struct HierarchySearch {
    struct Meeting {
        var seconds: Double
        /// The graph's edges from the start node to the end node, in driving order.
        var edges: [Int]
        var start: Int
        var end: Int
    }

    private struct Reached {
        var seconds: Double
        /// The hierarchy edge it was reached by, and the node at its other end (-1, -1 for a start).
        var edge: Int32
        var from: Int32
    }

    let hierarchy: ContractionHierarchy

    func search(starts: [(node: Int, seconds: Double)], ends: [(node: Int, seconds: Double)], within limit: Double = .infinity) -> Meeting?
    {
        var forward: [Int32: Reached] = [:]
        var backward: [Int32: Reached] = [:]
        forward.reserveCapacity(512)
        backward.reserveCapacity(512)
        var forwardOpen = MinHeap<Int32>(capacity: 256)
        var backwardOpen = MinHeap<Int32>(capacity: 256)
        for start in starts where start.seconds < forward[Int32(start.node)]?.seconds ?? .infinity {
            forward[Int32(start.node)] = Reached(seconds: start.seconds, edge: -1, from: -1)
            forwardOpen.push(start.seconds, Int32(start.node))
        }
        for end in ends where end.seconds < backward[Int32(end.node)]?.seconds ?? .infinity {
            backward[Int32(end.node)] = Reached(seconds: end.seconds, edge: -1, from: -1)
            backwardOpen.push(end.seconds, Int32(end.node))
        }
        var best = limit
        var meeting: Int32 = -1
        /// Settles the cheapest open node of one side: a meeting with the other side, then its arcs.
        func step(
            _ open: inout MinHeap<Int32>, _ reached: inout [Int32: Reached], other: [Int32: Reached], first: [Int32],
            arcs: [ContractionHierarchy.Arc]
        ) {
            guard let (cost, node) = open.pop(), cost <= reached[node]?.seconds ?? .infinity else { return }
            if let there = other[node], cost + there.seconds < best { (best, meeting) = (cost + there.seconds, node) }
            for index in first[Int(node)]..<first[Int(node) + 1] {
                let arc = arcs[Int(index)]
                let next = cost + arc.seconds
                if next < reached[arc.node]?.seconds ?? .infinity {
                    reached[arc.node] = Reached(seconds: next, edge: arc.id, from: node)
                    open.push(next, arc.node)
                }
            }
        }
        while min(forwardOpen.minimum, backwardOpen.minimum) < best {
            if forwardOpen.minimum <= backwardOpen.minimum {
                step(&forwardOpen, &forward, other: backward, first: hierarchy.upFirst, arcs: hierarchy.upArcs)
            } else {
                step(&backwardOpen, &backward, other: forward, first: hierarchy.downFirst, arcs: hierarchy.downArcs)
            }
        }
        guard meeting >= 0 else { return nil }
        // Down from the meeting to the start, then from the meeting to the end.
        var up: [Int32] = []
        var node = meeting
        while let step = forward[node], step.edge >= 0 {
            up.append(step.edge)
            node = step.from
        }
        let start = Int(node)
        var edges: [Int] = []
        for edge in up.reversed() { hierarchy.unpack(edge, into: &edges) }
        node = meeting
        while let step = backward[node], step.edge >= 0 {
            hierarchy.unpack(step.edge, into: &edges)
            node = step.from
        }
        return Meeting(seconds: best, edges: edges, start: start, end: Int(node))
    }
}
