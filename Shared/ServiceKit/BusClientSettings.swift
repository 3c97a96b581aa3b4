import Bus

/// The resolved settings of a service that connects to the bus (`BusClientOptions`): its bus
/// endpoints are those three addresses, which `BusExposure` checks.
public protocol BusClientSettings: ServiceSettings {
    var pub: String { get }
    var sub: String { get }
    var broker: String { get }
}

extension BusClientSettings {
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
