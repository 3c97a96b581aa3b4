import Foundation
import PlatformLauncher
import ServiceKit
import Storage
import Synchronization
import TestProcess

/// A throwaway PostgreSQL server for tests, from Debian's `postgresql` package (`make test`
/// installs it): its own cluster in a temporary folder, on a free port of 127.0.0.1, trusting
/// local connections, without fsync (tests need a real server, not a durable one). Run as the
/// `postgres` user when the tests run as root (PostgreSQL refuses to run as root).
///
/// `RIDE_TEST_DATABASE_URL` (a server's URL whose user may create databases) is used instead
/// when set. Stopped when the test process exits.
public final class TestPostgresServer: Sendable {
    public let port: Int
    public let directory: String
    /// The address it listens on and is reached at (127.0.0.1, or a test host's).
    public let host: String
    /// What the server is run through (empty, or `ip netns exec <host>` for a test host's network).
    let launcher: [String]
    let bin: String
    let runAs: String?
    /// More `-c` settings of the server (a primary's synchronous replication).
    let settings: [String]
    /// The running `postgres` process: our child, not a daemon (Foundation's Process never reaps a
    /// pg_ctl whose daemon inherited its descriptors, so the test waited forever).
    private let server = Mutex<Process?>(nil)

    /// One server for the whole test process, started by the first test that asks.
    public static func shared() async throws -> TestPostgresServer {
        try await Shared.server.value
    }

    private enum Shared {
        static let server = Task { try await TestPostgresServer.start() }
    }

    /// A new database on the shared server (or `RIDE_TEST_DATABASE_URL`'s), empty.
    public static func newDatabase() async throws -> PostgresURL {
        if let external = ProcessInfo.processInfo.environment["RIDE_TEST_DATABASE_URL"], !external.isEmpty {
            var url = try PostgresURL(parsing: external)
            let name = "ride_test_\(UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: ""))"
            try await runPSQL(
                host: url.host, port: url.port, user: url.username, password: url.password, database: url.database,
                sql: "CREATE DATABASE \(name)")
            url.database = name
            return url
        }
        return try await shared().newDatabase()
    }

    /// Starts a server of its own (a test that restarts or stops it uses one of these), on
    /// another free port when the one picked was taken before the server could bind it.
    /// `host` and `launcher`: a server on a test host of its own network (`ip netns exec`), at
    /// that host's address, trusting every address (the hosts' network is the test's own).
    /// `settings`: more `-c NAME=VALUE` for the server.
    public static func start(host: String = "127.0.0.1", launcher: [String] = [], settings: [String] = []) async throws
        -> TestPostgresServer
    {
        for _ in 1..<5 {
            do { return try await startOnce(host: host, launcher: launcher, settings: settings) } catch is PortTaken { continue }
        }
        return try await startOnce(host: host, launcher: launcher, settings: settings)
    }

    private static func startOnce(host: String, launcher: [String], settings: [String]) async throws -> TestPostgresServer {
        guard let bin = binDirectory() else {
            throw TestPostgresError("PostgreSQL's server programs are not installed (apt-get install postgresql; `make test` does it)")
        }
        let (directory, runAs) = try await newDirectory()
        let server = TestPostgresServer(
            port: try FreePort.next(), directory: directory, host: host, launcher: launcher, bin: bin, runAs: runAs, settings: settings)
        try await server.asServerUser(
            "\(bin)/initdb", ["-D", "\(directory)/data", "-U", "ride", "-A", "trust", "-E", "UTF8", "--no-sync", "--no-instructions"])
        if host != "127.0.0.1" {
            let rules = try FileHandle(forWritingTo: URL(fileURLWithPath: "\(directory)/data/pg_hba.conf"))
            try rules.seekToEnd()
            try rules.write(contentsOf: Data("host all all 0.0.0.0/0 trust\nhost replication all 0.0.0.0/0 trust\n".utf8))
            try rules.close()
        }
        try await server.startServer()
        TestPostgresRegistry.started(server)
        return server
    }

    init(
        port: Int, directory: String, host: String = "127.0.0.1", launcher: [String] = [], bin: String, runAs: String?,
        settings: [String] = []
    ) {
        (self.port, self.directory, self.host, self.launcher, self.bin, self.runAs) = (port, directory, host, launcher, bin, runAs)
        self.settings = settings
    }

    /// A folder for a cluster, owned by the server's user.
    private static func newDirectory() async throws -> (directory: String, runAs: String?) {
        let runAs = getuid() == 0 ? "postgres" : nil
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("ride-pg-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        if let runAs { try await run("/bin/chown", ["-R", "\(runAs):\(runAs)", directory]) }
        return (directory, runAs)
    }

    /// A streaming standby of this server (`pg_basebackup -R`), started on a port of its own: it
    /// follows every commit and takes no writes until `promote()`. On another host (`host`,
    /// `launcher`) it streams over TCP from this server's address, as across machines.
    public func standby(host: String? = nil, launcher: [String]? = nil) async throws -> TestPostgresServer {
        let (directory, runAs) = try await Self.newDirectory()
        let host = host ?? self.host
        // Not the primary's settings: promoted, a server told to wait for a synchronous standby it
        // does not have would hold every commit (docs/operations.md, "A primary and its standby").
        let standby = TestPostgresServer(
            port: try FreePort.next(), directory: directory, host: host, launcher: launcher ?? self.launcher, bin: bin, runAs: runAs)
        // From another host, over TCP (the conninfo `-R` writes is the one used here); else the Unix socket.
        let source = host == self.host ? self.directory : self.host
        try await standby.asServerUser(
            "\(bin)/pg_basebackup",
            ["-h", source, "-p", "\(port)", "-U", "ride", "-D", "\(directory)/data", "-R", "-X", "stream", "--no-sync"])
        try await standby.startServer()
        TestPostgresRegistry.started(standby)
        return standby
    }

    /// A standby becomes a primary (`pg_ctl promote`, waiting until it takes writes).
    public func promote() async throws {
        try await asServerUser("\(bin)/pg_ctl", ["promote", "-w", "-D", "\(directory)/data"])
    }

    /// `postgres://ride@HOST:PORT/NAME`.
    public func url(database: String = "postgres") -> PostgresURL {
        PostgresURL(host: host, port: port, username: "ride", database: database)
    }

    /// The first column of the first row `sql` answers in database `name` (asked on the Unix socket).
    public func value(_ sql: String, database name: String) async throws -> String {
        try await Self.run(
            "/usr/bin/psql", ["-h", directory, "-p", "\(port)", "-U", "ride", "-d", name, "-At", "-v", "ON_ERROR_STOP=1", "-c", sql]
        )
        .trimmingCharacters(in: .whitespacesAndNewlines)
    }

    public func newDatabase() async throws -> PostgresURL {
        try await createDatabase("t_\(UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: ""))")
    }

    /// Creates database `name` (once: an existing one is kept).
    @discardableResult
    public func createDatabase(_ name: String) async throws -> PostgresURL {
        // On its own Unix socket: reachable from this process whatever network the server is on.
        let exists =
            (try? await Self.run("/usr/bin/psql", ["-h", directory, "-p", "\(port)", "-U", "ride", "-d", name, "-c", "SELECT 1", "-q"]))
            != nil
        if !exists {
            try await Self.runPSQL(
                host: directory, port: port, user: "ride", password: nil, database: "postgres", sql: "CREATE DATABASE \(name)")
        }
        return url(database: name)
    }

    /// Starts the server (again, after `stop`) and waits until it accepts connections.
    public func startServer() async throws {
        let process = Process()
        let arguments =
            [
                "-D", "\(directory)/data", "-p", "\(port)", "-k", directory, "-c", "listen_addresses=\(host)", "-c", "fsync=off",
                "-c", "synchronous_commit=off", "-c", "full_page_writes=off", "-c", "max_connections=400",
            ] + settings.flatMap { ["-c", $0] }
        // setpriv (and `ip netns exec`) exec the next program themselves (no process in between),
        // so signals reach the server.
        let command =
            (runAs.map { ["/usr/bin/setpriv", "--reuid=\($0)", "--regid=\($0)", "--init-groups", "--"] } ?? []) + ["\(bin)/postgres"]
            + arguments
        let launched = launcher + command
        process.executableURL = URL(fileURLWithPath: launched[0])
        process.arguments = Array(launched.dropFirst())
        let log = try FileHandle(forWritingTo: URL(fileURLWithPath: try logFile()))
        try log.seekToEnd()
        process.standardOutput = log
        process.standardError = log
        process.standardInput = FileHandle.nullDevice
        try process.run()
        server.withLock { $0 = process }
        // Asked on its own Unix socket, not on the TCP port: another server that took the port first
        // (another process's free-port pick can race ours) would answer there, and this one exit.
        let deadline = ContinuousClock.now + .seconds(60)
        while (try? await Self.run("\(bin)/pg_isready", ["-q", "-h", directory, "-p", "\(port)"])) == nil {
            guard process.isRunning, ContinuousClock.now < deadline else {
                let log = (try? String(contentsOfFile: "\(directory)/server.log", encoding: .utf8)) ?? ""
                if log.contains("could not bind") || log.contains("Address already in use") { throw PortTaken() }
                throw TestPostgresError("PostgreSQL did not start; see \(directory)/server.log")
            }
            try await Task.sleep(for: .milliseconds(100))
        }
    }

    /// The server could not listen on its port: another process took it between the pick and the bind.
    struct PortTaken: Error {}

    private func logFile() throws -> String {
        let path = "\(directory)/server.log"
        if !FileManager.default.fileExists(atPath: path) { _ = FileManager.default.createFile(atPath: path, contents: nil) }
        return path
    }

    /// Stops the server: `fast` (SIGINT) ends every session at once, as a restart does; `immediate` (SIGQUIT) is a crash.
    public func stop(immediate: Bool = false) async throws {
        guard let process = server.withLock({ $0 }) else { return }
        kill(process.processIdentifier, immediate ? SIGQUIT : SIGINT)
        let deadline = ContinuousClock.now + .seconds(30)
        while process.isRunning, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(50)) }
        server.withLock { $0 = nil }
    }

    /// Freezes the server and every session of it (SIGSTOP), or thaws it (SIGCONT): a server that
    /// is up but answers nothing, as a hung host or a partition looks to its clients.
    public func freeze(_ frozen: Bool) async throws {
        guard let process = server.withLock({ $0 }) else { return }
        let children = try await Self.run("/usr/bin/pgrep", ["-P", "\(process.processIdentifier)"])
        for pid in [process.processIdentifier] + children.split(separator: "\n").compactMap({ Int32($0) }) {
            kill(pid, frozen ? SIGSTOP : SIGCONT)
        }
    }

    func stopAtExit() {
        if let process = server.withLock({ $0 }) {
            kill(process.processIdentifier, SIGQUIT)
            for _ in 0..<100 where process.isRunning { usleep(20_000) }
        }
        try? FileManager.default.removeItem(atPath: directory)
    }

    private func asServerUser(_ program: String, _ arguments: [String]) async throws {
        if let runAs {
            try await Self.run("/usr/sbin/runuser", ["-u", runAs, "--", program] + arguments)
        } else {
            try await Self.run(program, arguments)
        }
    }

    static func binDirectory() -> String? {
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? []
        return versions.compactMap(Int.init).sorted().reversed().map { "/usr/lib/postgresql/\($0)/bin" }
            .first { FileManager.default.isExecutableFile(atPath: "\($0)/initdb") }
    }

    static func runPSQL(host: String, port: Int, user: String, password: String?, database: String, sql: String) async throws {
        var environment = ProcessInfo.processInfo.environment
        if let password { environment["PGPASSWORD"] = password }
        try await run(
            "/usr/bin/psql", ["-h", host, "-p", "\(port)", "-U", user, "-d", database, "-v", "ON_ERROR_STOP=1", "-q", "-c", sql],
            environment: environment)
    }

    /// Runs a program to its end (off the cooperative pool); returns its output, or throws saying how it failed.
    @discardableResult
    static func run(_ program: String, _ arguments: [String], environment: [String: String]? = nil) async throws -> String {
        let outcome = try await TestProcess.run(program, arguments, environment: environment)
        let text = outcome.stdout + outcome.stderr
        guard outcome.status == 0 else {
            throw TestPostgresError("\(program) \(arguments.joined(separator: " ")) exited \(outcome.status): \(text)")
        }
        return text
    }
}

/// The servers to stop when the test process exits.
enum TestPostgresRegistry {
    static let servers = Mutex<[TestPostgresServer]>([])

    static func started(_ server: TestPostgresServer) {
        let first = servers.withLock { servers in
            servers.append(server)
            return servers.count == 1
        }
        if first { atexit { TestPostgresRegistry.stopAll() } }
    }

    static func stopAll() {
        for server in servers.withLock({ $0 }) { server.stopAtExit() }
    }
}

public struct TestPostgresError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}
