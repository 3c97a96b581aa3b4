/// A contraction hierarchy over a road graph's travel times (Geisberger, Sanders, Schultes and
/// Delling, 2008): the nodes are put in an order, least important first, and contracted one by one,
/// a shortcut standing in for each quickest path through a contracted node. A query then searches
/// upwards only, from both ends at once, and meets at the most important node of the quickest path:
/// a few hundred nodes settled where A* settles a good part of a metropolitan graph.
///
/// Built once per graph (`init(graph:)`, seconds for a million edges); read-only afterwards, so any
/// number of searches share it.
public struct ContractionHierarchy: Sendable {
    /// An edge of the hierarchy in a node's list: the node at its other end, its seconds, and which
    /// edge it is — an index of the graph's `edges`, or `originalEdges + i` for shortcut `i`.
    struct Arc: Sendable {
        var node: Int32
        var seconds: Double
        var id: Int32
    }

    /// The graph's edge count: hierarchy edge ids below it are the graph's own.
    let originalEdges: Int
    /// Shortcut `i` drives hierarchy edge `firstHalf[i]`, then `secondHalf[i]`.
    let firstHalf: [Int32]
    let secondHalf: [Int32]
    /// Edges from node `n` up to more important nodes: `upArcs[upFirst[n]..<upFirst[n + 1]]`.
    let upFirst: [Int32]
    let upArcs: [Arc]
    /// Edges into node `n` from more important nodes (`node` is where they start): the backward search's.
    let downFirst: [Int32]
    let downArcs: [Arc]

    /// How many shortcuts the contraction added.
    public var shortcutCount: Int { firstHalf.count }

    /// Orders and contracts every node of `graph`.
    public init(graph: RoadGraph) {
        var builder = HierarchyBuilder(nodeCount: graph.points.count)
        for (index, edge) in graph.edges.enumerated() where edge.from != edge.to {
            builder.add(from: Int(edge.from), to: Int(edge.to), seconds: graph.durations[index], id: Int32(index))
        }
        self = builder.contract(originalEdges: graph.edges.count)
    }

    init(originalEdges: Int, firstHalf: [Int32], secondHalf: [Int32], up: [[Arc]], down: [[Arc]]) {
        let (upFirst, upArcs) = Self.compressed(up)
        let (downFirst, downArcs) = Self.compressed(down)
        self.init(
            originalEdges: originalEdges, firstHalf: firstHalf, secondHalf: secondHalf, upFirst: upFirst, upArcs: upArcs,
            downFirst: downFirst, downArcs: downArcs)
    }

    init(originalEdges: Int, firstHalf: [Int32], secondHalf: [Int32], upFirst: [Int32], upArcs: [Arc], downFirst: [Int32], downArcs: [Arc])
    {
        self.originalEdges = originalEdges
        self.firstHalf = firstHalf
        self.secondHalf = secondHalf
        self.upFirst = upFirst
        self.upArcs = upArcs
        self.downFirst = downFirst
        self.downArcs = downArcs
    }

    private static func compressed(_ lists: [[Arc]]) -> ([Int32], [Arc]) {
        var first = [Int32](repeating: 0, count: lists.count + 1)
        var arcs: [Arc] = []
        arcs.reserveCapacity(lists.reduce(0) { $0 + $1.count })
        for (node, list) in lists.enumerated() {
            arcs.append(contentsOf: list)
            first[node + 1] = Int32(arcs.count)
        }
        return (first, arcs)
    }

    /// The graph's edges a hierarchy edge stands for, in driving order, appended to `edges`.
    func unpack(_ id: Int32, into edges: inout [Int]) {
        var stack = [id]
        while let next = stack.popLast() {
            let index = Int(next)
            if index < originalEdges {
                edges.append(index)
            } else {
                stack.append(secondHalf[index - originalEdges])
                stack.append(firstHalf[index - originalEdges])
            }
        }
    }
}
