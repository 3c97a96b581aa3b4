import Foundation
import PlatformLauncher
import SettingsKit

/// Redis (Debian's `redis-server`) as the peer a tracking benchmark stands beside: started on a
/// free port of this machine with nothing persisted, driven by the same load, measured from its
/// own counters (`INFO commandstats`, `INFO cpu`), stopped afterwards. Nil where it is not
/// installed: the benchmark then says so instead of a ratio.
struct RedisPeer {
    let supervisor: ProcessSupervisor
    let port: Int
    let version: String

    static let executable = ["/usr/bin/redis-server", "/usr/local/bin/redis-server"].first {
        FileManager.default.isExecutableFile(atPath: $0)
    }

    /// Why there is no peer, for the table.
    static let missing = "redis-server is not installed (apt-get install redis-server)"

    static func start(logs: String) async throws -> RedisPeer? {
        guard let executable else { return nil }
        let port = try FreePort.next()
        let supervisor = ProcessSupervisor(output: .files(directory: logs))
        try supervisor.start(
            name: "redis-server", executable: executable,
            arguments: [
                "--port", "\(port)", "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--protected-mode", "no", "--daemonize",
                "no",
            ])
        let deadline = ContinuousClock.now + .seconds(10)
        while ContinuousClock.now < deadline {
            if let connection = try? RedisConnection(host: "127.0.0.1", port: port),
                let info = try? connection.call("INFO", "server"), let version = RedisConnection.infoField(info, "redis_version")
            {
                return RedisPeer(supervisor: supervisor, port: port, version: version)
            }
            try await Task.sleep(for: .milliseconds(100))
        }
        await supervisor.stopAll(grace: .seconds(2))
        throw ConfigurationError("redis-server did not answer on port \(port) within 10 s (its log: \(logs)/redis-server.log)")
    }

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

    func stop() async { await supervisor.stopAll(grace: .seconds(5)) }
}
