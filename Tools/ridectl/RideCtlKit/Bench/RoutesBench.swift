import ArgumentParser
import Cities
import Foundation
import Geo
import Logging
import RoadServers
import Roads

/// `ridectl bench routes`: the embedded router in process, on one core — no platform to start —
/// on the built-in city or a bundle, and beside it the route servers given with `--beside`.
struct BenchRoutesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "routes",
        abstract:
            "Routes per second and the time per route of the embedded road router (EmbeddedRoutes), on the built-in Helsinki graph or a city bundle.",
        discussion: """
            Routes between random points on the graph's roads (a fixed seed, so every run asks the \
            same pairs), one after the other on one thread, after a warm-up. A metropolitan city \
            (`ridectl city synthetic --edges 1000000`) is routed on the contraction hierarchy the \
            bundle carries (loading it is timed). `--beside pgrouting:…` or `osrm:…` asks those providers \
            some of the same pairs. Prints a table; exits 1 if a target is missed.
            """)

    /// The targets: on a town's graph (issue 23) a route within a millisecond and one core
    /// answering 5 000 a second; on a metropolitan one (issue 40, over a million edges) within 5 ms.
    static let maxP99Microseconds = 1000.0
    static let minRoutesPerSecond = 5000.0
    static let metropolitanMaxP99Microseconds = 5000.0

    @Option(help: "Routes measured.") var routes = 20_000
    @Option(help: "Seed of the random pairs.") var seed: UInt64 = 23
    @Option(help: "A city bundle directory (ridectl city build, ridectl city synthetic) instead of the built-in Helsinki graph.") var city:
        String?
    @Option(help: "Another route source to ask the first --beside-routes pairs (pgrouting:postgres://…, osrm:http://…); repeatable.")
    var beside: [String] = []
    @Option(name: .customLong("beside-routes"), help: "Pairs each --beside provider is asked.") var besideRoutes = 1000
    @Flag(name: .customLong("a-star"), help: "Route by A* alone, without the city's contraction hierarchy (to compare).") var aStarOnly =
        false

    @OptionGroup var format: BenchFormat

    mutating func validate() throws {
        guard routes >= 100 else { throw ValidationError("--routes must be at least 100") }
        for source in beside {
            do { _ = try RouteSource(parsing: source) } catch { throw ValidationError("--beside \(source): \(error.message)") }
        }
    }

    func run() async throws {
        let clock = ContinuousClock()
        let loading = clock.now
        let bundle = try CitySetting(path: city, origin: "--city").load()
        let loadSeconds = (clock.now - loading) / .seconds(1)
        let roads = bundle.roads
        let router = aStarOnly ? EmbeddedRoutes(graph: roads) : bundle.routes
        let pairs = Self.pairs(on: roads, count: routes, seed: seed)
        Output.err("warming up…\n")
        for (start, end) in pairs.prefix(1000) { _ = try? router.shortestRoute(from: start, to: end) }
        Output.err("routing \(routes) pairs…\n")
        var micros: [Double] = []
        micros.reserveCapacity(routes)
        var (failed, metres) = (0, 0.0)
        let started = clock.now
        for (start, end) in pairs {
            let before = clock.now
            do {
                metres += try router.shortestRoute(from: start, to: end).distance
            } catch {
                failed += 1
            }
            micros.append((clock.now - before) / .microseconds(1))
        }
        let rate = Double(routes) / ((clock.now - started) / .seconds(1))
        let latency = Percentiles(micros)
        let metropolitan = roads.edges.count > CityBundle.hierarchyThreshold
        let search = router.hierarchy.map { "contraction hierarchy, \($0.shortcutCount) shortcuts" } ?? "A*"
        var table = BenchTable(
            title:
                "ridectl bench routes — embedded router (\(search)), \(bundle.manifest.name): \(roads.points.count) nodes, \(roads.edges.count) edges, \(routes) random pairs (seed \(seed)), one thread"
        )
        if metropolitan {
            table.add("routes per second", BenchTable.rate(rate, "routes/s"), "reported")
            table.add(
                "time per route, p50 / p99", "\(BenchTable.micros(latency.value(50))) / \(BenchTable.micros(latency.value(99)))",
                "p99 ≤ \(BenchTable.micros(Self.metropolitanMaxP99Microseconds))",
                met: latency.value(99) <= Self.metropolitanMaxP99Microseconds)
        } else {
            table.add(
                "routes per second", BenchTable.rate(rate, "routes/s"), "≥ \(Int(Self.minRoutesPerSecond)) routes/s",
                met: rate >= Self.minRoutesPerSecond)
            table.add(
                "time per route, p50 / p99", "\(BenchTable.micros(latency.value(50))) / \(BenchTable.micros(latency.value(99)))",
                "p99 ≤ \(BenchTable.micros(Self.maxP99Microseconds))", met: latency.value(99) <= Self.maxP99Microseconds)
        }
        table.add("  slowest route", BenchTable.micros(latency.value(100)), "reported")
        table.add("  mean route length", String(format: "%.0f m", metres / Double(max(routes - failed, 1))), "reported")
        table.add("pairs without a route", "\(failed)", "0", met: failed == 0)
        table.add("loading the city (graph, hierarchy, indexes)", String(format: "%.1f s", loadSeconds), "reported")
        table.add("peak memory of this process", String(format: "%.0f MB", Self.peakResidentMegabytes()), "reported")
        for source in beside {
            try await Self.compare(source, pairs: Array(pairs.prefix(besideRoutes)), in: &table)
        }
        try table.print(json: format.json)
    }

    /// Another provider on the first pairs, one at a time: its rate and latency beside the embedded router's.
    static func compare(_ text: String, pairs: [(GeoPoint, GeoPoint)], in table: inout BenchTable) async throws {
        let source = try RouteSource(parsing: text)
        let provider = try source.makeProvider(embedded: { StraightLineRoutes() }, logger: Logger(label: "bench-routes"))
        var micros: [Double] = []
        var failed = 0
        let clock = ContinuousClock()
        for (start, end) in pairs {
            let before = clock.now
            do {
                let route = try await provider.route(from: start, to: end)
                if route.kind != .road { failed += 1 }
            } catch {
                failed += 1
            }
            micros.append((clock.now - before) / .microseconds(1))
        }
        let latency = Percentiles(micros)
        let total = micros.reduce(0, +) / 1e6
        table.add("\(source) (\(pairs.count) pairs)", BenchTable.rate(Double(pairs.count) / max(total, 1e-9), "routes/s"), "reported")
        table.add("  p50 / p99", "\(BenchTable.micros(latency.value(50))) / \(BenchTable.micros(latency.value(99)))", "reported")
        table.add("  answered off the roads", "\(failed)", "reported")
    }

    /// Points on the roads: a random edge, a random share of it (a 64-bit LCG; no data needs better).
    static func pairs(on roads: RoadGraph, count: Int, seed: UInt64) -> [(GeoPoint, GeoPoint)] {
        var state = seed
        func nextPoint() -> GeoPoint {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            let edge = roads.edges[Int(state >> 33) % roads.edges.count]
            let share = Double((state >> 11) & 0xFFFF) / 65536
            let (from, to) = (roads.points[Int(edge.from)], roads.points[Int(edge.to)])
            return GeoPoint(
                latitude: from.latitude + (to.latitude - from.latitude) * share,
                longitude: from.longitude + (to.longitude - from.longitude) * share)
        }
        return (0..<count).map { _ in (nextPoint(), nextPoint()) }
    }

    /// VmHWM: the most this process has held in memory.
    static func peakResidentMegabytes() -> Double {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
            let kilobytes = line.split(separator: " ").dropFirst().first.flatMap({ Double($0) })
        else { return 0 }
        return kilobytes / 1024
    }
}
