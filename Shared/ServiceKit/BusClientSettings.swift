import Bus
import Foundation
import Logging
import SettingsKit

/// What the settings of every service that connects to the bus hold beside its own: the bus's
/// three addresses (`BusClientOptions`), its status server and its logs (`CommonOptions`),
/// resolved once from the options they all have.
public struct ServiceBasics: Sendable {
    public var pub: String
    public var sub: String
    public var broker: String
    public var http: HostPort
    public var logFormat: LogFormat
    public var logLevel: Logger.Level

    /// The options resolved, `--http` defaulting to the process's own port; throws a
    /// `ConfigurationError` naming a bad value.
    public init(_ process: RideProcess, bus: BusClientOptions, common: CommonOptions) throws {
        let logging = try common.logging()
        pub = try bus.publishEndpoint()
        sub = try bus.subscribeEndpoint()
        broker = try bus.brokerEndpoint()
        http = try common.httpAddress(default: process.httpDefault)
        (logFormat, logLevel) = logging
    }

    /// What `--check` prints: the process, its bus, its own `lines` (label, value), then its
    /// status server and logs, the values in one column.
    public func summary(of process: RideProcess, _ lines: KeyValuePairs<String, String>) -> String {
        let all =
            [("bus", "pub \(pub), sub \(sub), broker \(broker)")] + lines.map { ($0.key, $0.value) } + [
                ("health/metrics", "http://\(http)/health"), ("logs", "\(logFormat.rawValue), \(logLevel.rawValue)"),
            ]
        return (["\(process.executable) configuration OK"] + all.map(Self.summaryLine)).joined(separator: "\n")
    }

    /// One line of a `--check` summary: the values stand in one column.
    public static func summaryLine(_ label: String, _ value: String) -> String {
        "  " + label.padding(toLength: max(22, label.count + 1), withPad: " ", startingAt: 0) + value
    }
}

/// The resolved settings of a service that connects to the bus: its addresses, status server
/// and logs are its `basics`; its bus endpoints are those three addresses, which `BusExposure` checks.
public protocol BusClientSettings: ServiceSettings {
    var basics: ServiceBasics { get }
}

extension BusClientSettings {
    public var pub: String { basics.pub }
    public var sub: String { basics.sub }
    public var broker: String { basics.broker }
    public var http: HostPort { basics.http }
    public var logFormat: LogFormat { basics.logFormat }
    public var logLevel: Logger.Level { basics.logLevel }

    public var busEndpoints: [BusEndpointSetting] { busClientEndpoints }

    /// The three addresses, named as `BusExposure` reports them.
    public var busClientEndpoints: [BusEndpointSetting] {
        [
            BusEndpointSetting("event ingress (--pub, \(BusContract.publishEnvironment))", address: pub),
            BusEndpointSetting("event egress (--sub, \(BusContract.subscribeEnvironment))", address: sub),
            BusEndpointSetting("broker (--broker, \(BusContract.brokerEnvironment))", address: broker),
        ]
    }
}
