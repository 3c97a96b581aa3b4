import ArgumentParser
import Bus
import Foundation
import Logging
import ServiceKit
import SettingsKit

/// `ridectl`: the operator's and developer's command line.
public struct RideCtl: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "ridectl",
        abstract: "Operate the ridesharing platform: start it, watch its events, trace a ride, call its services, benchmark it.",
        version: PlatformVersion.current,
        subcommands: [
            UpCommand.self, StatusCommand.self, TailCommand.self, TraceCommand.self, TracesCommand.self, CallCommand.self,
            PublishCommand.self, HealthCommand.self,
            SimulateCommand.self, KeysCommand.self,
            ContractCommand.self, RoadsCommand.self, CityCommand.self, BenchCommand.self, BenchProxyCommand.self, EchoWorkerCommand.self,
            BenchDevicesCommand.self,
            FakeStripeCommand.self, FakePushCommand.self,
        ])

    public init() {}
}

/// Where the bus is: its endpoints (shared with every service) and its health URL.
struct BusAddresses: ParsableArguments {
    @OptionGroup var endpoints: BusClientOptions

    static let busHTTPKey = SettingKey(
        "bus-http", env: "RIDE_BUS_HTTP", default: "http://127.0.0.1:\(RideProcess.bus.httpPort)", "The bus's health/metrics URL")
    @Option(name: Self.busHTTPKey.name, help: Self.busHTTPKey.help) var busHTTP: String?

    @OptionGroup var curve: CurveOptions

    func secure() async throws { try await curve.secureRidectl() }

    func subscribeEndpoint() throws -> String { try endpoints.subscribeEndpoint() }
    func brokerEndpoint() throws -> String { try endpoints.brokerEndpoint() }
    func publishEndpoint() throws -> String { try endpoints.publishEndpoint() }

    func busHealthURL() -> String {
        Self.busHTTPKey.resolve(busHTTP).value
    }
}

extension CurveOptions {
    /// ridectl's key in a key directory unless `--curve-client` names another: `clients/operator.key`.
    static let ridectlClientName = "operator"

    /// Turns CURVE on for ridectl's bus sockets when `--curve-keys` (or the variables) say so, as
    /// `client` (an operator's key, or the benchmarks' `bench`). Call it before the first connection.
    func secureRidectl(as client: String = ridectlClientName) async throws {
        try await BusSecurity.enable(try withValidation { try security(client: client, serves: false) }, label: "ridectl")
    }
}

/// ridectl's own log lines (library warnings) go to standard error, text, warnings and worse.
enum CLILogging {
    static let logger: Logger = {
        let level = ProcessInfo.processInfo.environment["RIDE_LOG_LEVEL"].flatMap(Logger.Level.init(rawValue:)) ?? .warning
        return RideLogging.bootstrap(label: "ridectl", format: .text, level: level)
    }()
}

/// Writes without stdio buffering, so lines reach a pipe (`| jq`, `| grep`) as they happen.
enum Output {
    /// Once the reader of standard output is gone (`ridectl tail | head`), ridectl ends as a filter
    /// in a pipeline does, by SIGPIPE (which the runtime ignores, so it is raised here).
    static func out(_ text: String) {
        guard StandardStream.output.write(text) == .readerGone else { return }
        signal(SIGPIPE, SIG_DFL)
        raise(SIGPIPE)
    }
    static func err(_ text: String) { StandardStream.error.write(text) }
    static var stdoutIsTerminal: Bool { ANSI.isTerminal(fileDescriptor: 1) }
    static var stderrIsTerminal: Bool { ANSI.isTerminal(fileDescriptor: 2) }
    static var terminalWidth: Int {
        if let columns = ProcessInfo.processInfo.environment["COLUMNS"].flatMap(Int.init), columns > 20 { return columns }
        var size = winsize()
        if ioctl(1, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 20 { return Int(size.ws_col) }
        return 160
    }
}

extension ConfigurationError {
    var validation: ValidationError { ValidationError(message) }
}

/// Runs `body`, turning a `ConfigurationError` into ArgumentParser's usage error (exit 64).
func withValidation<T>(_ body: () throws -> T) throws -> T {
    do { return try body() } catch let error as ConfigurationError { throw error.validation }
}
