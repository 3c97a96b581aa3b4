import ArgumentParser
import Bus
import SettingsKit

/// Where a process finds the bus: the event ingress it publishes to, the egress it subscribes to,
/// the broker it sends requests through. Flags win over the variables, which win over the local defaults.
/// Each may name several endpoints separated by commas: the instances of a bus with no single point
/// of failure (`BusAddress`; docs/operations.md, "Two buses").
public struct BusClientOptions: ParsableArguments, Sendable {
    typealias Keys = ServiceSettingKeys
    @Option(name: Keys.publish.name, help: Keys.publish.help) public var pub: String?
    @Option(name: Keys.subscribe.name, help: Keys.subscribe.help) public var sub: String?
    @Option(name: Keys.broker.name, help: Keys.broker.help) public var broker: String?

    public init() {}

    public func publishEndpoint() throws -> String {
        try EndpointSyntax.validateAddress(
            Keys.publish.resolve(pub),
            name: "event ingress")
    }

    public func subscribeEndpoint() throws -> String {
        try EndpointSyntax.validateAddress(
            Keys.subscribe.resolve(sub),
            name: "event egress")
    }

    public func brokerEndpoint() throws -> String {
        try EndpointSyntax.validateAddress(
            Keys.broker.resolve(broker),
            name: "broker")
    }
}
