import ArgumentParser
import Bus
import Logging
import ServiceKit
import SettingsKit

/// `ride-bus`'s flags. Each has an environment variable; a flag wins over its variable.
public struct RideBusCommand: ServiceCommand {
    public static let configuration = CommandConfiguration(
        commandName: "ride-bus",
        abstract: "The platform's bus: the event forwarder (XSUB→XPUB) and the 7/MDP request broker.",
        discussion: """
            Publishers connect to the event ingress, subscribers to the event egress; clients and \
            workers connect to the broker (7/MDP 0.1 with 8/MMI mmi.service). /health and /metrics \
            are served on --http.

            \(ExitCodes.help())
            """,
        version: PlatformVersion.current
    )

    static let ingressEnvironment = "RIDE_BUS_PUB_BIND"
    static let egressEnvironment = "RIDE_BUS_SUB_BIND"
    static let brokerEnvironment = "RIDE_BROKER_BIND"

    @Option(
        name: .customLong("pub"),
        help: helpWithEnv(
            "Event ingress (XSUB) endpoints to bind, comma-separated; publishers connect here", env: RideBusCommand.ingressEnvironment,
            default: BusContract.eventIngressBind))
    var pub: String?

    @Option(
        name: .customLong("sub"),
        help: helpWithEnv(
            "Event egress (XPUB) endpoints to bind, comma-separated; subscribers connect here", env: RideBusCommand.egressEnvironment,
            default: BusContract.eventEgressBind))
    var sub: String?

    @Option(
        name: .customLong("broker"),
        help: helpWithEnv(
            "7/MDP broker (ROUTER) endpoints to bind, comma-separated (e.g. tcp://*:5557,ipc:///run/ride/broker.sock); clients and workers connect here",
            env: RideBusCommand.brokerEnvironment,
            default: BusContract.brokerBind))
    var broker: String?

    @Option(
        name: .customLong("hwm"),
        help: helpWithEnv("High-water mark of the event sockets, in messages per peer", env: "RIDE_BUS_HWM", default: "100000"))
    var highWaterMark: Int?

    @Option(
        name: .customLong("heartbeat-ms"),
        help: helpWithEnv("MDP heartbeat interval in milliseconds", env: "RIDE_HEARTBEAT_MS", default: "2500"))
    var heartbeatMilliseconds: Int?

    @Option(
        name: .customLong("liveness"),
        help: helpWithEnv("Heartbeats a worker may miss before it is dropped", env: "RIDE_HEARTBEAT_LIVENESS", default: "3"))
    var liveness: Int?

    @Option(
        name: .customLong("request-ttl-ms"),
        help: helpWithEnv(
            "How long a request may wait for a worker before it is answered 503", env: "RIDE_REQUEST_TTL_MS", default: "10000"))
    var requestTTLMilliseconds: Int?

    @OptionGroup public var common: CommonOptions

    /// It binds the event and broker sockets, and connects nowhere.
    public static let servesBusEndpoints = true
    public static let curveClientName: String? = nil

    public init() {}

    public static func serve(_ settings: BusSettings) async throws {
        try await BusServer(settings: settings).run()
    }

    public func settings() throws -> BusSettings {
        let logging = try common.logging()
        var brokerConfiguration = BrokerConfiguration()
        brokerConfiguration.heartbeatInterval = Int64(
            try integerSetting(heartbeatMilliseconds, flag: "heartbeat-ms", env: "RIDE_HEARTBEAT_MS", default: 2500, range: 10...600_000))
        brokerConfiguration.heartbeatLiveness = Int64(
            try integerSetting(liveness, flag: "liveness", env: "RIDE_HEARTBEAT_LIVENESS", default: 3, range: 1...100))
        brokerConfiguration.requestTimeToLive = Int64(
            try integerSetting(
                requestTTLMilliseconds, flag: "request-ttl-ms", env: "RIDE_REQUEST_TTL_MS", default: 10_000, range: 100...3_600_000))
        return BusSettings(
            ingress: try EndpointSyntax.validateList(
                Setting.resolve(pub, flag: "pub", env: RideBusCommand.ingressEnvironment, default: BusContract.eventIngressBind),
                name: "event ingress", forBinding: true),
            egress: try EndpointSyntax.validateList(
                Setting.resolve(sub, flag: "sub", env: RideBusCommand.egressEnvironment, default: BusContract.eventEgressBind),
                name: "event egress", forBinding: true),
            broker: try EndpointSyntax.validateList(
                Setting.resolve(broker, flag: "broker", env: RideBusCommand.brokerEnvironment, default: BusContract.brokerBind),
                name: "broker", forBinding: true),
            highWaterMark: Int32(
                try integerSetting(highWaterMark, flag: "hwm", env: "RIDE_BUS_HWM", default: 100_000, range: 0...100_000_000)),
            brokerConfiguration: brokerConfiguration,
            http: try common.httpAddress(default: RideProcess.bus.httpDefault),
            logFormat: logging.format,
            logLevel: logging.level)
    }
}

/// `ride-bus`'s resolved configuration.
public struct BusSettings: ServiceSettings {
    public var ingress: [String]
    public var egress: [String]
    public var broker: [String]
    public var highWaterMark: Int32
    public var brokerConfiguration: BrokerConfiguration
    public var http: HostPort
    public var logFormat: LogFormat
    public var logLevel: Logger.Level

    /// Every socket it binds: each is a bus endpoint.
    public var busEndpoints: [BusEndpointSetting] {
        [
            BusEndpointSetting("event ingress (--pub, \(RideBusCommand.ingressEnvironment))", ingress),
            BusEndpointSetting("event egress (--sub, \(RideBusCommand.egressEnvironment))", egress),
            BusEndpointSetting("broker (--broker, \(RideBusCommand.brokerEnvironment))", broker),
        ]
    }

    public var summary: String {
        """
        ride-bus configuration OK
          event ingress (XSUB)  \(ingress.joined(separator: ", "))
          event egress (XPUB)   \(egress.joined(separator: ", "))
          broker (7/MDP)        \(broker.joined(separator: ", "))
          high-water mark       \(highWaterMark)
          heartbeat             \(brokerConfiguration.heartbeatInterval) ms × \(brokerConfiguration.heartbeatLiveness)
          request TTL           \(brokerConfiguration.requestTimeToLive) ms
          health/metrics        http://\(http)/health
          logs                  \(logFormat.rawValue), \(logLevel.rawValue)
        """
    }
}
