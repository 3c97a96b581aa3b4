import Bus
import Foundation
import PlatformLauncher

/// The processes `ridectl up` starts, in start order, with the addresses that make them one
/// platform on this machine (the public defaults: bus on 5555–5557, health/metrics on 9100…); their
/// command lines are `PlatformCommands`'.
///
/// The broker also listens on a Unix socket under the data directory, and the platform's own
/// processes send requests through it: on one host, `ipc://` skips the kernel's TCP/IP path
/// (measured: about 40 µs less per request, 15% more requests per second). Events stay on TCP,
/// which forwards more of them per second here.
enum Platform {
    /// `portOffset` shifts every port, so a second platform can run beside the first.
    /// `trackingShards` tracking processes split the devices (`--shard K/N`): shard 0 is `tracking`,
    /// shard K `tracking-K`, each with its own ingest and health port (the first's + 100 × K: shard 1
    /// on 5658 and 9204 — tracking has no replicas, so the replicas' +100 ports never take these).
    /// The bus's sockets and tracking's ingest listen as `listen` says (`BusListening`): this machine's
    /// loopback unless told otherwise; the gateway, the apps' door, on every interface.
    static func processes(
        binDirectory: String, dataDirectory: String, portOffset: Int = 0, trackingShards: Int = 1, listen: BusListening = .loopback
    ) -> [PlatformProcess] {
        let port = { (base: Int) in base + portOffset }
        let http = { (base: Int) in "127.0.0.1:\(port(base))" }
        let bind = { (base: Int) in "tcp://\(listen.host):\(port(base))" }
        var binds = (pub: bind(PlatformPorts.eventIngress), sub: bind(PlatformPorts.eventEgress), broker: bind(PlatformPorts.broker))
        var bus = BusEndpoints(
            ingress: "tcp://127.0.0.1:\(port(PlatformPorts.eventIngress))", egress: "tcp://127.0.0.1:\(port(PlatformPorts.eventEgress))",
            broker: "tcp://127.0.0.1:\(port(PlatformPorts.broker))")
        // The platform's own processes reach the bus through its Unix sockets (authenticated once,
        // not sealed: docs/security.md); TCP stays for tools and other hosts.
        if let sockets = localBusSockets(dataDirectory: dataDirectory) {
            binds.pub += ",ipc://\(sockets.ingress)"
            binds.sub += ",ipc://\(sockets.egress)"
            binds.broker += ",ipc://\(sockets.broker)"
            bus = BusEndpoints(ingress: "ipc://\(sockets.ingress)", egress: "ipc://\(sockets.egress)", broker: "ipc://\(sockets.broker)")
        }
        let service = { (process: RideProcess) in
            PlatformCommands.service(
                process.executable, name: process.rawValue, binDirectory: binDirectory, bus: bus, http: http(process.httpPort),
                dataDirectory: dataDirectory)
        }
        return [
            PlatformCommands.bus(
                binDirectory: binDirectory, pub: binds.pub, sub: binds.sub, broker: binds.broker, http: http(RideProcess.bus.httpPort)),
            service(.users),
        ]
            + (0..<trackingShards).map { shard in
                PlatformCommands.tracking(
                    name: shard == 0 ? "tracking" : "tracking-\(shard)", binDirectory: binDirectory, bus: bus,
                    http: http(RideProcess.tracking.httpPort + PlatformPorts.shardStride * shard),
                    dataDirectory: dataDirectory, ingest: bind(trackingIngestPort(shard: shard)),
                    shard: trackingShards > 1 ? "\(shard)/\(trackingShards)" : nil)
            } + [
                service(.trips), service(.orders), service(.notifications),
                PlatformCommands.gateway(
                    binDirectory: binDirectory, bus: bus, http: http(RideProcess.gateway.httpPort),
                    listen: "0.0.0.0:\(port(PlatformPorts.gateway))"),
            ]
    }

    /// The device ingest port of tracking's shard `shard`, before any offset.
    static func trackingIngestPort(shard: Int) -> Int { PlatformPorts.trackingIngest + PlatformPorts.shardStride * shard }

    /// What the TrackingSDK is given (RIDE_TRACKING_INGEST): every shard's ingest, in shard order.
    static func trackingIngestEndpoints(shards: Int, portOffset: Int = 0) -> [String] {
        (0..<shards).map { "tcp://127.0.0.1:\(trackingIngestPort(shard: $0) + portOffset)" }
    }

    /// The services that may run as several instances on one data directory (their SQLite files
    /// shared: SQLite serialises writers across processes; every reaction is idempotent).
    static let replicable = ["users", "orders", "trips", "notifications"]

    /// `processes` with `replicas[name] - 1` more instances of each named service, right after its
    /// first: named `orders-2`, `orders-3`…, the same flags but their own health port (the first's
    /// + 100 × (n − 1): orders-2 on 9202).
    static func withReplicas(_ processes: [PlatformProcess], _ replicas: [String: Int]) -> [PlatformProcess] {
        processes.flatMap { process -> [PlatformProcess] in
            let count = replicas[process.name] ?? 1
            guard count > 1, let index = process.arguments.firstIndex(of: "--http"), index + 1 < process.arguments.count,
                let colon = process.arguments[index + 1].lastIndex(of: ":"),
                let port = Int(process.arguments[index + 1][colon...].dropFirst())
            else { return [process] }
            let host = process.arguments[index + 1][..<colon]
            return [process]
                + (2...count).map { instance in
                    var replica = process
                    replica.name = "\(process.name)-\(instance)"
                    replica.arguments[index + 1] = "\(host):\(port + 100 * (instance - 1))"
                    replica.healthURL = "http://\(host):\(port + 100 * (instance - 1))/health"
                    return replica
                }
        }
    }

    /// Parses `orders=3,trips=2`: each a replicable service and a count from 1 to 8.
    static func parseReplicas(_ text: String) throws -> [String: Int] {
        var replicas: [String: Int] = [:]
        for part in text.split(separator: ",") {
            let pair = part.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            guard pair.count == 2, let count = Int(pair[1]), (1...8).contains(count) else {
                throw ReplicasError("'\(part)' must be SERVICE=COUNT with a count from 1 to 8 (e.g. orders=3)")
            }
            guard replicable.contains(pair[0]) else {
                throw ReplicasError("'\(pair[0])' cannot run as several instances here; these can: \(replicable.joined(separator: ", "))")
            }
            replicas[pair[0]] = count
        }
        return replicas
    }

    struct ReplicasError: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    /// The bus's Unix sockets (event ingress, egress, the broker) under the data directory, as
    /// absolute paths; nil when a path would be too long for one (then everything uses TCP).
    static func localBusSockets(dataDirectory: String) -> (ingress: String, egress: String, broker: String)? {
        let directory = URL(fileURLWithPath: dataDirectory).standardizedFileURL.path
        let (ingress, egress, broker) = (directory + "/events-in.sock", directory + "/events-out.sock", directory + "/broker.sock")
        return [ingress, egress, broker].allSatisfy { $0.utf8.count <= 100 } ? (ingress, egress, broker) : nil
    }
}
