import Foundation
import Geo
import ZeroMQ

/// `bench nearby`'s load on Redis: the drivers loaded with pipelined `GEOADD`s, then the queries
/// the platform's Nearby answers asked as `GEOSEARCH … FROMLONLAT … BYRADIUS r m ASC COUNT 10`,
/// `inflight` at a time on one connection (as the platform's one client keeps them in flight).
enum RedisNearbyLoad {
    /// The drivers at the same kind of random points `DriverLoad` gives the platform.
    static func load(drivers: Int, address: String, origin: GeoPoint) throws {
        let connection = try connect(address)
        var generator = SystemRandomNumberGenerator()
        var index = 0
        var commands = 0
        while index < drivers {
            var arguments: [[UInt8]] = [Array("GEOADD".utf8), Array(RedisLoad.key.utf8)]
            for _ in 0..<min(1000, drivers - index) {
                let point = origin.destination(
                    bearing: Double.random(in: 0..<360, using: &generator), distance: Double.random(in: 0...10_000, using: &generator))
                arguments += [Array(String(point.longitude).utf8), Array(String(point.latitude).utf8), Array("driver-\(index)".utf8)]
                index += 1
            }
            connection.queue(arguments)
            commands += 1
        }
        try connection.flush()
        var replies = 0
        while replies < commands { replies += try connection.receiveReplies(waitingUpTo: 1000) }
        if connection.errors > 0 { throw RedisConnection.Failure("Redis refused the drivers: \(connection.firstError ?? "")") }
    }

    /// Latencies in µs, queries answered, seconds.
    static func run(address: String, seconds: Double, inflight: Int, radius: Double, origin: GeoPoint) throws -> (Percentiles, Int, Double)
    {
        let connection = try connect(address)
        var generator = SystemRandomNumberGenerator()
        var sentAt: [UInt64] = []
        var latencies: [Double] = []
        func ask() {
            let center = origin.destination(
                bearing: Double.random(in: 0..<360, using: &generator), distance: Double.random(in: 0...9000, using: &generator))
            connection.queue(
                "GEOSEARCH", RedisLoad.key, "FROMLONLAT", String(center.longitude), String(center.latitude), "BYRADIUS",
                String(Int(radius)), "m", "ASC", "COUNT", "10")
            sentAt.append(MonotonicClock.nanoseconds())
        }
        let start = ContinuousClock.now
        let deadline = start + .milliseconds(Int(seconds * 1000))
        for _ in 0..<inflight { ask() }
        try connection.flush()
        var answered = 0
        while !sentAt.isEmpty {
            let replies = try connection.receiveReplies(waitingUpTo: 1000)
            let now = MonotonicClock.nanoseconds()
            for _ in 0..<replies {
                latencies.append(Double(now - sentAt.removeFirst()) / 1000)
                answered += 1
                if ContinuousClock.now < deadline { ask() }
            }
            if connection.queuedBytes > 0 { try connection.flush() }
        }
        if connection.errors > 0 { throw RedisConnection.Failure("Redis refused a GEOSEARCH: \(connection.firstError ?? "")") }
        return (Percentiles(latencies), answered, Double((ContinuousClock.now - start).milliseconds) / 1000)
    }

    private static func connect(_ address: String) throws -> RedisConnection {
        let parts = address.split(separator: ":")
        guard parts.count == 2, let port = Int(parts[1]) else { throw RedisConnection.Failure("not HOST:PORT: \(address)") }
        return try RedisConnection(host: String(parts[0]), port: port)
    }
}
