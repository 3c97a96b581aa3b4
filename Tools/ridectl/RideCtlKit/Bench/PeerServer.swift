import Foundation
import PlatformLauncher
import SettingsKit

/// A peer a benchmark measures beside the platform, in the same run (Redis, NATS).
protocol BenchPeer {
    var server: PeerServer { get }
    /// Starts the peer; nil where it is not installed.
    static func start(logs: String) async throws -> Self?
}

extension BenchPeer {
    /// Runs `body` beside a peer of its own, stopped afterwards however `body` ends; false, without
    /// running it, where the peer is not installed.
    static func run(logs: String, _ body: (Self) async throws -> Void) async throws -> Bool {
        guard let peer = try await start(logs: logs) else { return false }
        do {
            try await body(peer)
        } catch {
            await peer.server.stop()
            throw error
        }
        await peer.server.stop()
        return true
    }
}

/// A peer's server process: started on a free port of this machine, asked for its version until it
/// answers, stopped afterwards.
struct PeerServer {
    let supervisor: ProcessSupervisor
    let port: Int
    let version: String

    /// The first of `paths` that is an executable file.
    static func installed(_ paths: [String]) -> String? { paths.first { FileManager.default.isExecutableFile(atPath: $0) } }

    /// Starts `executable` with `arguments(port)` and asks `version(port)` until it answers (10 s).
    static func start(
        name: String, executable: String, logs: String, arguments: (Int) -> [String], version: (Int) throws -> String
    ) async throws -> PeerServer {
        let port = try FreePort.next()
        let supervisor = ProcessSupervisor(output: .files(directory: logs))
        try supervisor.start(name: name, executable: executable, arguments: arguments(port))
        let deadline = ContinuousClock.now + .seconds(10)
        while ContinuousClock.now < deadline {
            if let answer = try? version(port) { return PeerServer(supervisor: supervisor, port: port, version: answer) }
            try await Task.sleep(for: .milliseconds(100))
        }
        await supervisor.stopAll(grace: .seconds(2))
        throw ConfigurationError("\(name) did not answer on port \(port) within 10 s (its log: \(logs)/\(name).log)")
    }

    func stop() async { await supervisor.stopAll(grace: .seconds(5)) }
}
