import ArgumentParser
import Bus
import Foundation
import Logging
import SettingsKit

/// ZeroMQ endpoint syntax, checked before libzmq sees it so the error can name the setting.
public enum EndpointSyntax {
    /// Checks `setting` as an endpoint; `forBinding` allows `*` as host and port.
    public static func validate(_ setting: Setting, name: String, forBinding: Bool) throws -> String {
        if let problem = problem(with: setting.value, forBinding: forBinding) {
            throw ConfigurationError("\(name) (\(setting.origin)) '\(setting.value)' is not a ZeroMQ endpoint: \(problem)")
        }
        return setting.value
    }

    /// Checks a comma-separated list of endpoints (a socket may bind several: `tcp://*:5557,ipc:///run/ride/broker.sock`).
    public static func validateList(_ setting: Setting, name: String, forBinding: Bool) throws -> [String] {
        let endpoints = setting.value.split(separator: ",", omittingEmptySubsequences: false).map {
            $0.trimmingCharacters(in: .whitespaces)
        }
        guard !endpoints.isEmpty, !endpoints.contains(where: \.isEmpty) else {
            throw ConfigurationError("\(name) (\(setting.origin)) '\(setting.value)' must be one or more endpoints separated by commas")
        }
        for endpoint in endpoints {
            if let problem = problem(with: endpoint, forBinding: forBinding) {
                throw ConfigurationError("\(name) (\(setting.origin)) '\(endpoint)' is not a ZeroMQ endpoint: \(problem)")
            }
            if endpoint.hasPrefix("ipc://"), endpoint.utf8.count - 6 > 100 {
                throw ConfigurationError("\(name) (\(setting.origin)) '\(endpoint)': a Unix socket path must be at most 100 bytes")
            }
        }
        return endpoints
    }

    /// Checks a bus address a process connects to (`BusAddress`: one endpoint or several, separated
    /// by commas); returns it with the spaces around commas removed.
    public static func validateAddress(_ setting: Setting, name: String) throws -> String {
        try validateList(setting, name: name, forBinding: false).joined(separator: ",")
    }

    public static func problem(with endpoint: String, forBinding: Bool) -> String? {
        let expected =
            forBinding
            ? "expected tcp://HOST:PORT (HOST may be *), ipc://PATH or inproc://NAME"
            : "expected tcp://HOST:PORT, ipc://PATH or inproc://NAME"
        guard let schemeEnd = endpoint.range(of: "://") else { return expected }
        let scheme = endpoint[..<schemeEnd.lowerBound]
        let rest = String(endpoint[schemeEnd.upperBound...])
        switch scheme {
        case "ipc", "inproc":
            return rest.isEmpty ? expected : nil
        case "tcp":
            guard let colon = rest.lastIndex(of: ":") else { return "missing :PORT; \(expected)" }
            let host = rest[..<colon]
            let port = rest[rest.index(after: colon)...]
            if host.isEmpty { return "missing HOST; \(expected)" }
            if host == "*" && !forBinding { return "cannot connect to host *" }
            if port == "*" { return forBinding ? nil : "cannot connect to port *" }
            guard let number = Int(port), (1...65535).contains(number) else {
                return "port '\(port)' is not a number from 1 to 65535"
            }
            return nil
        default:
            return "unknown transport '\(scheme)'; \(expected)"
        }
    }
}

/// Options every service executable has: its health/metrics listener, logging, `--check`.
public struct CommonOptions: ParsableArguments, Sendable {
    typealias Keys = ServiceSettingKeys
    @Option(name: Keys.http.name, help: Keys.http.help) public var http: String?
    @Option(name: Keys.logFormat.name, help: Keys.logFormat.help) public var logFormat: String?
    @Option(name: Keys.logLevel.name, help: Keys.logLevel.help) public var logLevel: String?

    @Flag(name: .customLong("check"), help: "Check the configuration (flags and environment), print it, and exit without starting.")
    public var check = false

    @OptionGroup public var curve: CurveOptions

    @Flag(name: Keys.insecureBus.name, help: Keys.insecureBus.help) public var insecureBus = false
    @Option(name: Keys.mode.name, help: Keys.mode.help) public var mode: String?

    public init() {}

    /// `--mode` resolved; anything but development or production is a `ConfigurationError`.
    public func runMode(environment: [String: String] = ProcessInfo.processInfo.environment) throws -> RunMode {
        let setting = Keys.mode.resolve(mode, environment: environment)
        guard let mode = RunMode(rawValue: setting.value) else {
            throw ConfigurationError("mode (\(setting.origin)) '\(setting.value)' must be development or production")
        }
        return mode
    }

    /// Whether `--insecure-bus` (or its variable) allows a plain bus on addresses other machines reach.
    public func insecureBusAllowed(environment: [String: String] = ProcessInfo.processInfo.environment) throws -> Bool {
        try Keys.insecureBus.isOn(insecureBus, environment: environment)
    }

    /// Resolved logging settings; throws a `ConfigurationError` naming a bad value.
    public func logging() throws -> (format: LogFormat, level: Logger.Level) {
        let formatSetting = Keys.logFormat.resolve(logFormat)
        guard let format = LogFormat(rawValue: formatSetting.value) else {
            throw ConfigurationError("log format (\(formatSetting.origin)) '\(formatSetting.value)' must be text or json")
        }
        let levelSetting = Keys.logLevel.resolve(logLevel)
        guard let level = Logger.Level(rawValue: levelSetting.value) else {
            throw ConfigurationError(
                "log level (\(levelSetting.origin)) '\(levelSetting.value)' must be one of trace, debug, info, notice, warning, error, critical"
            )
        }
        return (format, level)
    }

    /// The resolved HTTP listener address, with this executable's default.
    public func httpAddress(default defaultValue: String) throws -> HostPort {
        try HostPort.parse(Keys.http.resolve(http, default: defaultValue), name: "HTTP address")
    }
}
