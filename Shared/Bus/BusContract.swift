/// The public contract of the bus: endpoints and service names (the ops and events are in RideContract).
/// Each endpoint is a flag and an environment variable of the executables that use it.
///
/// `ride-bus` binds this machine's loopback unless told otherwise: a bus other machines reach needs
/// CURVE (or `--insecure-bus`), so the default is one that needs neither (docs/operations.md).
public enum BusContract {
    /// Where `ride-bus` binds event ingress (XSUB): publishers connect here.
    public static let eventIngressBind = "tcp://127.0.0.1:\(PlatformPorts.eventIngress)"
    /// Where `ride-bus` binds event egress (XPUB): subscribers connect here.
    public static let eventEgressBind = "tcp://127.0.0.1:\(PlatformPorts.eventEgress)"
    /// Where `ride-bus` binds the 7/MDP broker (ROUTER): clients and workers connect here.
    public static let brokerBind = "tcp://127.0.0.1:\(PlatformPorts.broker)"

    /// What clients connect to by default (a local bus), with the environment variables that change it.
    public static let publishEndpoint = "tcp://127.0.0.1:\(PlatformPorts.eventIngress)"
    public static let publishEnvironment = "RIDE_BUS_PUB"
    public static let subscribeEndpoint = "tcp://127.0.0.1:\(PlatformPorts.eventEgress)"
    public static let subscribeEnvironment = "RIDE_BUS_SUB"
    public static let brokerEndpoint = "tcp://127.0.0.1:\(PlatformPorts.broker)"
    public static let brokerEnvironment = "RIDE_BROKER"

    /// The largest request or reply the broker takes (a photo's base64 in `users.put_photo` is the
    /// largest legitimate one, under 7 MiB): a peer that sends more is disconnected before any of it
    /// is read into memory (`ZMQ_MAXMSGSIZE`).
    public static let maximumRequestBytes: Int64 = 16 << 20
    /// The largest event the forwarder takes (events carry an order or a trip, a few KiB).
    public static let maximumEventBytes: Int64 = 1 << 20

    /// MDP service names of the platform.
    public enum Service {
        public static let users = "users"
        public static let orders = "orders"
        public static let trips = "trips"
        public static let tracking = "tracking"
        public static let notifications = "notifications"
        public static let all = [users, orders, trips, tracking, notifications]

        /// The peer service of tracking's shard `index` (`tracking.shard.1`): it answers for that
        /// shard's own devices only, and is how the shards reach one another.
        public static func trackingShard(_ index: Int) -> String { "\(tracking).shard.\(index)" }
        /// Every shard's service, as a pattern of `BusPermissions`.
        public static let trackingShards = "\(tracking).shard.*"
    }
}
