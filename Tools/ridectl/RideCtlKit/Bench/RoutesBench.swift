import ArgumentParser
import Foundation
import Geo
import Roads

/// `ridectl bench routes`: the embedded router in process, on one core — no platform to start.
struct BenchRoutesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "routes",
        abstract: "Routes per second and the time per route of the embedded road router (EmbeddedRoutes) on the built-in Helsinki graph.",
        discussion: """
            Routes between random points on the graph's roads (a fixed seed, so every run asks the \
            same pairs), one after the other on one thread, after a warm-up. Prints a table; exits 1 \
            if a target is missed.
            """)

    /// The targets (issue 23): a route within a millisecond, and one core answering 5 000 a second.
    static let maxP99Microseconds = 1000.0
    static let minRoutesPerSecond = 5000.0

    @Option(help: "Routes measured.") var routes = 20_000
    @Option(help: "Seed of the random pairs.") var seed: UInt64 = 23
    @Option(help: "A road graph file instead of the built-in Helsinki one.") var graph: String?

    @OptionGroup var format: BenchFormat

    mutating func validate() throws {
        guard routes >= 100 else { throw ValidationError("--routes must be at least 100") }
    }

    func run() throws {
        let roads = try graph.map { try RoadGraph(contentsOf: $0) } ?? RoadGraph.helsinki()
        guard !roads.edges.isEmpty else { throw ValidationError("the graph has no roads") }
        let router = EmbeddedRoutes(graph: roads)
        // Points on the roads: a random edge, a random share of it (a 64-bit LCG; no data needs better).
        var state = seed
        func nextPoint() -> GeoPoint {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            let edge = roads.edges[Int(state >> 33) % roads.edges.count]
            let share = Double((state >> 11) & 0xFFFF) / 65536
            let (from, to) = (roads.points[Int(edge.from)], roads.points[Int(edge.to)])
            return GeoPoint(latitude: from.latitude + (to.latitude - from.latitude) * share, longitude: from.longitude + (to.longitude - from.longitude) * share)
        }
        let pairs = (0..<routes).map { _ in (nextPoint(), nextPoint()) }
        Output.err("warming up…\n")
        for (start, end) in pairs.prefix(1000) { _ = try? router.shortestRoute(from: start, to: end) }
        Output.err("routing \(routes) pairs…\n")
        var micros: [Double] = []
        micros.reserveCapacity(routes)
        var (failed, metres) = (0, 0.0)
        let clock = ContinuousClock()
        let started = clock.now
        for (start, end) in pairs {
            let before = clock.now
            do {
                metres += try router.shortestRoute(from: start, to: end).distance
            } catch {
                failed += 1
            }
            let took = clock.now - before
            micros.append(Double(took.components.attoseconds) / 1e12 + Double(took.components.seconds) * 1e6)
        }
        let elapsed = clock.now - started
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        let rate = Double(routes) / seconds
        let latency = Percentiles(micros)
        var table = BenchTable(
            title: "ridectl bench routes — embedded router, \(roads.points.count) nodes, \(roads.edges.count) edges, \(routes) random pairs (seed \(seed)), one thread")
        table.add("routes per second", BenchTable.rate(rate, "routes/s"), "≥ \(Int(Self.minRoutesPerSecond)) routes/s", met: rate >= Self.minRoutesPerSecond)
        table.add(
            "time per route, p50 / p99", "\(BenchTable.micros(latency.value(50))) / \(BenchTable.micros(latency.value(99)))",
            "p99 ≤ \(BenchTable.micros(Self.maxP99Microseconds))", met: latency.value(99) <= Self.maxP99Microseconds)
        table.add("  slowest route", BenchTable.micros(latency.value(100)), "reported")
        table.add("  mean route length", String(format: "%.0f m", metres / Double(max(routes - failed, 1))), "reported")
        table.add("pairs without a route", "\(failed)", "0", met: failed == 0)
        try table.print(json: format.json)
    }
}
