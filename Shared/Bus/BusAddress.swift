import Foundation
import ZeroMQ

/// Where a process finds the bus: one endpoint, or several separated by commas — the instances of a
/// bus with no single point of failure (docs/design.md, "Two buses"). A publisher and a subscriber
/// connect to every instance, a worker registers with every broker, and a client sends each request
/// to one broker and fails over to the next (`BrokerFailover`).
public enum BusAddress {
    /// The endpoints `address` names, in order (the first is a client's preferred broker).
    public static func endpoints(_ address: String) -> [String] {
        address.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }

    /// ZeroMQ's own heartbeat on connections to a bus of several instances: a host that dies without
    /// closing its connections (power, network) is noticed within `timeout` and its connection
    /// dropped, so what was queued for it (events the other instance carries anyway) stops holding
    /// the publisher back, and reconnecting starts. One instance needs none: there is nowhere else to go.
    public static let heartbeat = (interval: Int32(1000), timeout: Int32(3000))
}

extension Socket {
    /// Connects to every endpoint of the bus address `address`, with ZeroMQ's heartbeat when there
    /// are several; returns how many.
    @discardableResult
    func connect(busAddress address: String) throws -> Int {
        let endpoints = BusAddress.endpoints(address)
        if endpoints.count > 1 {
            try setHeartbeat(
                intervalMilliseconds: BusAddress.heartbeat.interval, timeoutMilliseconds: BusAddress.heartbeat.timeout,
                ttlMilliseconds: BusAddress.heartbeat.timeout)
        }
        for endpoint in endpoints { try connect(endpoint) }
        return endpoints.count
    }
}
