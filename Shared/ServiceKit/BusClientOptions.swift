import ArgumentParser
import Bus
import SettingsKit

/// Where a process finds the bus: the event ingress it publishes to, the egress it subscribes to,
/// the broker it sends requests through. Flags win over the variables, which win over the local defaults.
/// Each may name several endpoints separated by commas: the instances of a bus with no single point
/// of failure (`BusAddress`; docs/operations.md, "Two buses").
public struct BusClientOptions: ParsableArguments, Sendable {
    @Option(
        name: .customLong("pub"),
        help: helpWithEnv(
            "Bus event ingress to publish to (comma-separated: every instance of the bus)", env: BusContract.publishEnvironment,
            default: BusContract.publishEndpoint)
    )
    public var pub: String?

    @Option(
        name: .customLong("sub"),
        help: helpWithEnv(
            "Bus event egress to subscribe to (comma-separated: every instance of the bus)", env: BusContract.subscribeEnvironment,
            default: BusContract.subscribeEndpoint))
    public var sub: String?

    @Option(
        name: .customLong("broker"),
        help: helpWithEnv(
            "7/MDP broker to send requests through and serve ops on (comma-separated: every broker, first preferred)",
            env: BusContract.brokerEnvironment,
            default: BusContract.brokerEndpoint))
    public var broker: String?

    public init() {}

    public func publishEndpoint() throws -> String {
        try EndpointSyntax.validateAddress(
            Setting.resolve(pub, flag: "pub", env: BusContract.publishEnvironment, default: BusContract.publishEndpoint),
            name: "event ingress")
    }

    public func subscribeEndpoint() throws -> String {
        try EndpointSyntax.validateAddress(
            Setting.resolve(sub, flag: "sub", env: BusContract.subscribeEnvironment, default: BusContract.subscribeEndpoint),
            name: "event egress")
    }

    public func brokerEndpoint() throws -> String {
        try EndpointSyntax.validateAddress(
            Setting.resolve(broker, flag: "broker", env: BusContract.brokerEnvironment, default: BusContract.brokerEndpoint),
            name: "broker")
    }
}
