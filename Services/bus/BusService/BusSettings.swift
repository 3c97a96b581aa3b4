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

    typealias Keys = BusSettingKeys

    @Option(name: Keys.pub.name, help: Keys.pub.help) var pub: String?
    @Option(name: Keys.sub.name, help: Keys.sub.help) var sub: String?
    @Option(name: Keys.broker.name, help: Keys.broker.help) var broker: String?
    @Option(name: Keys.highWaterMark.name, help: Keys.highWaterMark.help) var highWaterMark: Int?
    @Option(name: Keys.heartbeatMilliseconds.name, help: Keys.heartbeatMilliseconds.help) var heartbeatMilliseconds: Int?
    @Option(name: Keys.liveness.name, help: Keys.liveness.help) var liveness: Int?
    @Option(name: Keys.requestTTLMilliseconds.name, help: Keys.requestTTLMilliseconds.help) var requestTTLMilliseconds: Int?
    @Flag(name: Keys.noPacking.name, help: Keys.noPacking.help) var noPacking = false

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
        brokerConfiguration.heartbeatInterval = Int64(try Keys.heartbeatMilliseconds.value(heartbeatMilliseconds))
        brokerConfiguration.heartbeatLiveness = Int64(try Keys.liveness.value(liveness))
        brokerConfiguration.requestTimeToLive = Int64(try Keys.requestTTLMilliseconds.value(requestTTLMilliseconds))
        brokerConfiguration.announcesPackedEnvelope = try !Keys.noPacking.isOn(noPacking)
        return BusSettings(
            ingress: try EndpointSyntax.validateList(
                Keys.pub.resolve(pub),
                name: "event ingress", forBinding: true),
            egress: try EndpointSyntax.validateList(
                Keys.sub.resolve(sub),
                name: "event egress", forBinding: true),
            broker: try EndpointSyntax.validateList(
                Keys.broker.resolve(broker),
                name: "broker", forBinding: true),
            highWaterMark: Int32(try Keys.highWaterMark.value(highWaterMark)),
            brokerConfiguration: brokerConfiguration,
            eventBatches: brokerConfiguration.announcesPackedEnvelope,
            http: try common.httpAddress(default: RideProcess.bus.httpDefault),
            logFormat: logging.format,
            logLevel: logging.level)
    }
}

/// `ride-bus`'s own settings, each declared once: the flags and the values come from here.
enum BusSettingKeys {
    static let pub = SettingKey(
        "pub", env: "RIDE_BUS_PUB_BIND", default: BusContract.eventIngressBind,
        "Event ingress (XSUB) endpoints to bind, comma-separated; publishers connect here")
    static let sub = SettingKey(
        "sub", env: "RIDE_BUS_SUB_BIND", default: BusContract.eventEgressBind,
        "Event egress (XPUB) endpoints to bind, comma-separated; subscribers connect here")
    static let broker = SettingKey(
        "broker", env: "RIDE_BROKER_BIND", default: BusContract.brokerBind,
        "7/MDP broker (ROUTER) endpoints to bind, comma-separated (e.g. tcp://*:5557,ipc:///run/ride/broker.sock); clients and workers connect here"
    )
    static let highWaterMark = IntegerSettingKey(
        "hwm", env: "RIDE_BUS_HWM", default: 100_000, range: 0...100_000_000, "High-water mark of the event sockets, in messages per peer")
    static let heartbeatMilliseconds = IntegerSettingKey(
        "heartbeat-ms", env: "RIDE_HEARTBEAT_MS", default: 2500, range: 10...600_000, "MDP heartbeat interval in milliseconds")
    static let liveness = IntegerSettingKey(
        "liveness", env: "RIDE_HEARTBEAT_LIVENESS", default: 3, range: 1...100, "Heartbeats a worker may miss before it is dropped")
    static let requestTTLMilliseconds = IntegerSettingKey(
        "request-ttl-ms", env: "RIDE_REQUEST_TTL_MS", default: 10_000, range: 100...3_600_000,
        "How long a request may wait for a worker before it is answered 503")
    static let noPacking = SettingKey(
        "no-packing", env: "RIDE_BUS_NO_PACKING", unset: "off",
        "Do not tell clients and workers that the broker reads a request or reply packed into one frame, nor ask publishers for events in batches: they then send 7/MDP's frames and each event in its two (docs/design.md#one-frame-requests); for comparing the two, or a tool that reads the frames on the wire"
    )
}

/// `ride-bus`'s resolved configuration.
public struct BusSettings: ServiceSettings {
    public var ingress: [String]
    public var egress: [String]
    public var broker: [String]
    public var highWaterMark: Int32
    public var brokerConfiguration: BrokerConfiguration
    /// Whether publishers are asked for events in batches (off with --no-packing, as one-frame requests are).
    public var eventBatches: Bool
    public var http: HostPort
    public var logFormat: LogFormat
    public var logLevel: Logger.Level

    /// Every socket it binds: each is a bus endpoint.
    public var busEndpoints: [BusEndpointSetting] {
        [
            BusEndpointSetting("event ingress (\(BusSettingKeys.pub.flagAndVariable))", ingress),
            BusEndpointSetting("event egress (\(BusSettingKeys.sub.flagAndVariable))", egress),
            BusEndpointSetting("broker (\(BusSettingKeys.broker.flagAndVariable))", broker),
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
          one-frame requests    \(brokerConfiguration.announcesPackedEnvelope ? "announced" : "not announced (--no-packing)")
          event batches         \(eventBatches ? "asked for" : "not asked for (--no-packing)")
          health/metrics        http://\(http)/health
          logs                  \(logFormat.rawValue), \(logLevel.rawValue)
        """
    }
}
