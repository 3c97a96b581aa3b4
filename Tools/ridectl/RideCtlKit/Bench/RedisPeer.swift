import Foundation
import PlatformLauncher
import SettingsKit

/// Redis (Debian's `redis-server`) as the peer a tracking benchmark stands beside: started on a
/// free port of this machine with nothing persisted, driven by the same load, measured from its
/// own counters (`INFO commandstats`, `INFO cpu`), stopped afterwards. Nil where it is not
/// installed: the benchmark then says so instead of a ratio.
struct RedisPeer: BenchPeer {
    let server: PeerServer

    /// Why there is no peer, for the table.
    static let missing = "redis-server is not installed (apt-get install redis-server)"

    static func start(logs: String) async throws -> RedisPeer? {
        guard let executable = PeerServer.installed(["/usr/bin/redis-server", "/usr/local/bin/redis-server"]) else { return nil }
        let server = try await PeerServer.start(
            name: "redis-server", executable: executable, logs: logs,
            arguments: { port in
                [
                    "--port", "\(port)", "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--protected-mode", "no",
                    "--daemonize", "no",
                ]
            },
            version: { port in
                let info = try RedisConnection(host: "127.0.0.1", port: port).call("INFO", "server")
                guard let version = RedisConnection.infoField(info, "redis_version") else { throw RedisConnection.Failure("no version") }
                return version
            })
        return RedisPeer(server: server)
    }

    var port: Int { server.port }
    var version: String { server.version }
    var address: String { "127.0.0.1:\(port)" }

    /// What Redis has done so far: GEOADD and GEOSEARCH calls, and its CPU seconds (user + system).
    struct Counters {
        var geoadds: Double
        var geosearches: Double
        var cpuSeconds: Double
    }

    func counters() throws -> Counters {
        let connection = try RedisConnection(host: "127.0.0.1", port: port)
        let commands = try connection.call("INFO", "commandstats")
        let cpu = try connection.call("INFO", "cpu")
        func calls(_ command: String) -> Double {
            RedisConnection.infoField(commands, "cmdstat_\(command)").flatMap { stat in
                stat.split(separator: ",").first { $0.hasPrefix("calls=") }.flatMap { Double($0.dropFirst("calls=".count)) }
            } ?? 0
        }
        let used = ["used_cpu_user", "used_cpu_sys"].compactMap { RedisConnection.infoField(cpu, $0).flatMap(Double.init) }.reduce(0, +)
        return Counters(geoadds: calls("geoadd"), geosearches: calls("geosearch"), cpuSeconds: used)
    }
}
