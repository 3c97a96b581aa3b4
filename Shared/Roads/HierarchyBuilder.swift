/// Contracts a graph into a `ContractionHierarchy`: nodes by priority (lazily updated), each one's
/// shortcuts found by witness searches bounded in settled nodes, so a dense late stage cannot run
/// away (a search that gives up only adds a shortcut that was not needed: routes stay optimal).
struct HierarchyBuilder {
    typealias Arc = ContractionHierarchy.Arc

    /// The remaining graph: arcs between nodes not contracted yet, the quickest per pair.
    private var outs: [[Arc]]
    private var ins: [[Arc]]
    private var deletedNeighbours: [Int32]
    private var level: [Int32]
    private var firstHalf: [Int32] = []
    private var secondHalf: [Int32] = []
    private var originalEdges = 0
    private var witness: WitnessSearch

    /// Settled nodes a witness search may take: fewer while only estimating a node's priority.
    static let estimateLimit = 60
    static let contractLimit = 400

    init(nodeCount: Int) {
        outs = Array(repeating: [], count: nodeCount)
        ins = Array(repeating: [], count: nodeCount)
        deletedNeighbours = Array(repeating: 0, count: nodeCount)
        level = Array(repeating: 0, count: nodeCount)
        witness = WitnessSearch(nodeCount: nodeCount)
    }

    /// An arc `from` → `to`, unless one as quick is there; true when it was added or improved.
    @discardableResult
    mutating func add(from: Int, to: Int, seconds: Double, id: Int32) -> Bool {
        if let existing = outs[from].firstIndex(where: { Int($0.node) == to }) {
            guard seconds < outs[from][existing].seconds else { return false }
            outs[from][existing].seconds = seconds
            outs[from][existing].id = id
            if let back = ins[to].firstIndex(where: { Int($0.node) == from }) {
                ins[to][back].seconds = seconds
                ins[to][back].id = id
            }
            return true
        }
        outs[from].append(Arc(node: Int32(to), seconds: seconds, id: id))
        ins[to].append(Arc(node: Int32(from), seconds: seconds, id: id))
        return true
    }

    private struct Shortcut {
        var from: Int32
        var to: Int32
        var seconds: Double
        var first: Int32
        var second: Int32
    }

    /// The shortcuts contracting `node` needs: one per (in, out) pair whose path through `node` no
    /// other path of the remaining graph matches.
    private mutating func shortcuts(of node: Int, limit: Int) -> [Shortcut] {
        let leaving = outs[node]
        guard !leaving.isEmpty, !ins[node].isEmpty else { return [] }
        let longestOut = leaving.reduce(0) { max($0, $1.seconds) }
        var found: [Shortcut] = []
        for arriving in ins[node] {
            let start = Int(arriving.node)
            witness.run(from: start, avoiding: node, within: arriving.seconds + longestOut, settling: limit, outs: outs)
            for next in leaving where Int(next.node) != start {
                let through = arriving.seconds + next.seconds
                if witness.seconds(to: Int(next.node)) > through {
                    found.append(Shortcut(from: arriving.node, to: next.node, seconds: through, first: arriving.id, second: next.id))
                }
            }
        }
        return found
    }

    /// Lower first: the shortcuts a node adds against the arcs it removes, then how many of its
    /// neighbours went before it and how deep it sits (both spread the contraction evenly).
    private mutating func priority(of node: Int) -> Double {
        let added = shortcuts(of: node, limit: Self.estimateLimit).count
        let removed = outs[node].count + ins[node].count
        return Double(2 * (added - removed)) + Double(deletedNeighbours[node]) + Double(level[node])
    }

    mutating func contract(originalEdges: Int) -> ContractionHierarchy {
        self.originalEdges = originalEdges
        let count = outs.count
        var queue = MinHeap<Int32>(capacity: count)
        for node in 0..<count { queue.push(priority(of: node), Int32(node)) }
        var up = [[Arc]](repeating: [], count: count)
        var down = [[Arc]](repeating: [], count: count)
        while let (_, picked) = queue.pop() {
            let node = Int(picked)
            // Lazy update: a node whose priority rose since it was queued waits its turn again.
            let now = priority(of: node)
            if now > queue.minimum {
                queue.push(now, picked)
                continue
            }
            let added = shortcuts(of: node, limit: Self.contractLimit)
            // Every neighbour left is more important than `node`: its arcs are the hierarchy's.
            up[node] = outs[node]
            down[node] = ins[node]
            var neighbours: [Int32] = []
            for arc in outs[node] {
                ins[Int(arc.node)].removeAll { Int($0.node) == node }
                neighbours.append(arc.node)
            }
            for arc in ins[node] {
                outs[Int(arc.node)].removeAll { Int($0.node) == node }
                neighbours.append(arc.node)
            }
            outs[node] = []
            ins[node] = []
            for shortcut in added {
                let id = Int32(originalEdges + firstHalf.count)
                if add(from: Int(shortcut.from), to: Int(shortcut.to), seconds: shortcut.seconds, id: id) {
                    firstHalf.append(shortcut.first)
                    secondHalf.append(shortcut.second)
                }
            }
            for neighbour in Set(neighbours) {
                deletedNeighbours[Int(neighbour)] += 1
                level[Int(neighbour)] = max(level[Int(neighbour)], level[node] + 1)
            }
        }
        return ContractionHierarchy(originalEdges: originalEdges, firstHalf: firstHalf, secondHalf: secondHalf, up: up, down: down)
    }
}

/// A Dijkstra search from one node of the remaining graph around the node being contracted, for
/// paths that make a shortcut unnecessary; its arrays are reused, reset by the nodes it touched.
struct WitnessSearch {
    private var seconds: [Double]
    private var touched: [Int32] = []
    private var open = MinHeap<Int32>()

    init(nodeCount: Int) { seconds = Array(repeating: .infinity, count: nodeCount) }

    /// The quickest time found to `node` by the last run (infinity: none within its bounds).
    func seconds(to node: Int) -> Double { seconds[node] }

    mutating func run(from start: Int, avoiding avoided: Int, within bound: Double, settling limit: Int, outs: [[ContractionHierarchy.Arc]])
    {
        for node in touched { seconds[Int(node)] = .infinity }
        touched.removeAll(keepingCapacity: true)
        open.removeAll()
        seconds[start] = 0
        touched.append(Int32(start))
        open.push(0, Int32(start))
        var settled = 0
        while let (cost, node32) = open.pop() {
            let node = Int(node32)
            if cost > seconds[node] { continue }
            if cost > bound { break }
            settled += 1
            if settled > limit { break }
            for arc in outs[node] where Int(arc.node) != avoided {
                let next = Int(arc.node)
                let reached = cost + arc.seconds
                if reached < seconds[next] {
                    if seconds[next] == .infinity { touched.append(arc.node) }
                    seconds[next] = reached
                    open.push(reached, arc.node)
                }
            }
        }
    }
}
