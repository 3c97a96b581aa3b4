import ArgumentParser
import Bus
import Foundation
import Logging
import SettingsKit
import ZeroMQ

/// A service's resolved configuration, printed by `--check`.
public protocol ServiceSettings: Sendable {
    var summary: String { get }
    /// Every bus endpoint it binds or connects to (the device ingest counts): one that other
    /// machines reach needs CURVE or `--insecure-bus` (`BusExposure`).
    var busEndpoints: [BusEndpointSetting] { get }
    /// Its secrets, held to `--mode` (`SecretPolicy`).
    var secrets: [SecretSetting] { get }
    /// Its status server (`--http`) and logs (`--log-format`, `--log-level`), which `ServiceHost` starts.
    var http: HostPort { get }
    var logFormat: LogFormat { get }
    var logLevel: Logger.Level { get }
}

extension ServiceSettings {
    public var secrets: [SecretSetting] { [] }
}

/// The command of a service executable: its flags resolve into settings (a bad flag or variable
/// is a usage error naming it, exit 64), `--check` prints them, and otherwise the service runs.
public protocol ServiceCommand: AsyncParsableCommand {
    associatedtype Settings: ServiceSettings
    var common: CommonOptions { get }
    /// The flags, environment and defaults resolved; throws a `ConfigurationError` naming the setting.
    func settings() throws -> Settings
    /// Runs the service until it is told to stop.
    static func serve(_ settings: Settings) async throws
    /// Whether it binds bus endpoints others connect to (then, with CURVE, it needs the server key).
    static var servesBusEndpoints: Bool { get }
    /// The name of its CURVE client key (`clients/NAME.key`); nil when it never connects (the bus).
    static var curveClientName: String? { get }
    /// The role it holds on the bus (`RideContract.Roles`): its calls and subscriptions are held to
    /// it in the process too (`ProcessRole`), plain bus or not; nil for the bus itself.
    static var busRole: HeldRole? { get }
}

extension ServiceCommand {
    public static var servesBusEndpoints: Bool { false }
    public static var busRole: HeldRole? { nil }

    /// `ride-orders` → `orders` (`clients/orders.key`).
    public static var curveClientName: String? {
        let name = configuration.commandName ?? "ride"
        return name.hasPrefix("ride-") ? String(name.dropFirst(5)) : name
    }

    func curveSecurity() throws -> CurveSecurity? {
        try common.curve.security(client: Self.curveClientName, serves: Self.servesBusEndpoints)
    }

    /// The settings and CURVE, checked together: a bus endpoint other machines reach without
    /// CURVE is refused unless `--insecure-bus` says so; the secrets, CURVE's keys among them, are
    /// held to `--mode` (development's warnings are returned, for the log).
    func configuration() throws -> (settings: Settings, curve: CurveSecurity?, mode: RunMode, warnings: [String]) {
        let settings = try settings()
        let curve = try curveSecurity()
        try BusExposure.check(settings.busEndpoints, curve: curve != nil, insecure: try common.insecureBusAllowed())
        let mode = try common.runMode()
        var secrets = settings.secrets
        if let curve {
            // The keys' public halves: a shipped secret key has a shipped public key.
            secrets.append(
                SecretSetting(
                    name: "CURVE key of this process", origin: "--curve-keys", value: Array(curve.identity.publicKey.utf8), minimumLength: 0
                ))
            secrets.append(
                SecretSetting(name: "CURVE server key", origin: "--curve-keys", value: Array(curve.serverKey.utf8), minimumLength: 0))
        }
        return (settings, curve, mode, try SecretPolicy.check(secrets, mode: mode))
    }

    public mutating func validate() throws {
        do {
            _ = try configuration()
        } catch let error as ConfigurationError {
            throw ValidationError(error.message)
        }
    }

    public func run() async throws { try await runService() }

    /// Resolves the settings, turns CURVE on and serves (what `run` does unless a command gives
    /// `run` a job of its own first).
    public func runService() async throws {
        // A service's log is a pipe whose reader may go (its supervisor killed, `| head`): that
        // must cost log lines (StandardStream), never the process.
        signal(SIGPIPE, SIG_IGN)
        let (settings, curve, mode, warnings) = try configuration()
        if common.check {
            print(settings.summary)
            print(ServiceBasics.summaryLine("bus security", BusExposure.summary(settings.busEndpoints, curve: curve)))
            print(
                ServiceBasics.summaryLine("mode", mode.rawValue)
                    + (mode == .production
                        ? " (secrets checked)"
                        : warnings.isEmpty ? "" : " (\(warnings.count) shipped secret\(warnings.count == 1 ? "" : "s") in use)"))
            return
        }
        StartupWarnings.add(warnings)
        stopWithParentIfAsked(program: Self.configuration.commandName ?? "ride")
        if let role = Self.busRole { ProcessRole.adopt(role) }
        do {
            try await BusSecurity.enable(curve, label: Self.configuration.commandName ?? "ride")
        } catch {
            throw exitWithError(
                "cannot turn CURVE on: \(error)", program: Self.configuration.commandName ?? "ride", code: ExitCodes.unavailable)
        }
        try await Self.serve(settings)
    }
}

/// Requests a service process serves at once unless told otherwise. A handler that awaits
/// another service or the database holds its slot meanwhile, so a small number caps throughput
/// long before the CPU does: `ridectl bench lifecycle` (300 rides at once) went from 115 to
/// 149 rides/s with 64 instead of 8. An idle connection costs a socket and a heartbeat.
public let defaultWorkerConcurrency = 32

/// Set by `ridectl up` for its children: when the parent is gone — even killed with SIGKILL, which
/// it cannot pass on — the process stops itself gracefully (SIGTERM to itself) within half a
/// second, instead of living on as an orphan that holds the platform's ports. Its output went to
/// the parent, so from then on it goes to `<data dir>/<program>.orphaned.log` (the only trace of
/// how the stop went). A graceful stop that is still going `orphanGrace` later (the bus went with
/// the parent, so a publisher or a reactor may wait on it) ends with `_exit`, as `docker stop` ends
/// with SIGKILL: every store is transactional, so an exit loses nothing committed. `_exit`, not
/// `exit`: exit runs atexit handlers and flushes stdio, and either can block behind a thread that
/// is stuck — the case this is for.
public let stopWithParentEnvironment = "RIDE_STOP_WITH_PARENT"
let orphanGrace = Duration.seconds(6)

func stopWithParentIfAsked(program: String, environment: [String: String] = ProcessInfo.processInfo.environment) {
    guard environment[stopWithParentEnvironment] == "1" else { return }
    let parent = getppid()
    let orphanLog = environment["RIDE_DATA_DIR"].map { "\($0)/\(program).orphaned.log" }
    // A thread of its own, not a task: the watch must run even when the cooperative pool is busy
    // or stuck — that is when an orphan is most likely to linger.
    Thread.detachNewThread {
        while getppid() == parent { usleep(200_000) }
        if let orphanLog {
            let file = open(orphanLog, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
            if file >= 0 {
                dup2(file, STDOUT_FILENO)
                dup2(file, STDERR_FILENO)
                close(file)
            }
        }
        StandardStream.error.write("\(program): the parent process (pid \(parent)) is gone; stopping (pid \(getpid()))\n")
        kill(getpid(), SIGTERM)
        usleep(UInt32(orphanGrace.components.seconds * 1_000_000))
        StandardStream.error.write("\(program): stopping gracefully took over \(orphanGrace); exiting now\n")
        _exit(ExitCodes.software)
    }
}
