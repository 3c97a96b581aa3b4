import ArgumentParser
import Foundation
import Geo
import RoadServers

/// `ridectl bench routes-pg`: routes per second and their latency from `PgRoutingRoutes`, over a
/// database `ridectl roads import-pg` filled. The trips are fixed: pairs of points drawn with a
/// fixed seed inside the box of central Helsinki's extract, so runs compare.
struct BenchRoutesPgCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "routes-pg", abstract: "Routes/s and p50/p99 latency of the pgRouting route provider over fixed Helsinki trips.")

    @Option(name: .customLong("database-url"), help: "The database `ridectl roads import-pg` imported the Helsinki extract into.")
    var databaseURL: String
    @Option(help: "Routes to ask for in all.") var routes = 2000
    @Option(help: "Routes in flight at once.") var inflight = 4
    @Option(help: "Distinct trips (fixed by seed).") var trips = 200

    @OptionGroup var format: BenchFormat

    mutating func validate() throws {
        guard routes >= 1, inflight >= 1, trips >= 1 else { throw ValidationError("--routes, --inflight and --trips must be positive") }
    }

    /// The Helsinki extract's box of roads, as the import reports it.
    static let latitudes = 60.1642...60.1791
    static let longitudes = 24.9352...24.9534

    func run() async throws {
        let address: DatabaseAddress
        do { address = try DatabaseAddress(parsing: databaseURL) } catch { throw ValidationError("--database-url: \(error)") }
        let provider = PgRoutingRoutes(address: address, timeout: .seconds(10), logger: CLILogging.logger)
        let pairs = Self.fixedPairs(count: trips)
        // One route first: a database without the import fails here, clearly, not 2000 times.
        do { _ = try await provider.route(from: pairs[0].0, to: pairs[0].1) } catch {
            Output.err("ridectl bench routes-pg: \(error)\n")
            throw ExitCode.failure
        }
        let started = ContinuousClock.now
        let (latencies, failures) = await withTaskGroup(of: ([Double], Int).self) { group in
            for worker in 0..<inflight {
                group.addTask {
                    var latencies: [Double] = []
                    var failures = 0
                    for index in stride(from: worker, to: routes, by: inflight) {
                        let (start, end) = pairs[index % pairs.count]
                        let asked = ContinuousClock.now
                        do { _ = try await provider.route(from: start, to: end) } catch { failures += 1 }
                        latencies.append((ContinuousClock.now - asked) / .milliseconds(1))
                    }
                    return (latencies, failures)
                }
            }
            return await group.reduce(into: ([Double](), 0)) {
                $0.0 += $1.0
                $0.1 += $1.1
            }
        }
        let seconds = (ContinuousClock.now - started) / .seconds(1)
        let percentiles = Percentiles(latencies)
        var table = BenchTable(
            bench: "routes-pg", "\(routes) routes over \(trips) Helsinki trips, \(inflight) in flight"
        )
        table.add("routes", BenchTable.rate(Double(routes) / seconds, "routes/s"), "reported")
        table.add("latency p50", String(format: "%.2f ms", percentiles.value(50)), "reported")
        table.add("latency p99", String(format: "%.2f ms", percentiles.value(99)), "reported")
        table.add("no route (unroutable or off the roads)", "\(failures) of \(routes)", "reported")
        try table.print(json: format.json)
    }

    /// `count` trips from a fixed seed (a linear congruential generator: the same on every machine).
    static func fixedPairs(count: Int) -> [(GeoPoint, GeoPoint)] {
        var state: UInt64 = 0x2354_4865_6c73_696e
        func next(_ range: ClosedRange<Double>) -> Double {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return range.lowerBound + Double(state >> 11) / Double(1 << 53) * (range.upperBound - range.lowerBound)
        }
        func point() -> GeoPoint { GeoPoint(latitude: next(latitudes), longitude: next(longitudes)) }
        return (0..<count).map { _ in (point(), point()) }
    }
}
