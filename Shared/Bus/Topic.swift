/// Topics are dot paths (`order.status.ACCEPTED`, `device.location.<device id>`), subscribed by prefix.
/// ZeroMQ filters at the publisher, so a subscriber to `device.location.42` costs nothing for other devices.
public enum Topic {
    /// Longest topic we accept, in bytes.
    public static let maximumLength = 255

    /// Why `topic` cannot be used, or nil when it can: non-empty, at most 255 bytes, printable ASCII
    /// without spaces (device and order ids are UUIDs or similar).
    public static func problem(with topic: String) -> String? {
        if topic.isEmpty { return "topic is empty" }
        if topic.utf8.count > maximumLength { return "topic is longer than \(maximumLength) bytes" }
        if let bad = topic.utf8.first(where: { $0 <= 0x20 || $0 >= 0x7F }) {
            return "topic contains a character that is not printable ASCII (byte 0x\(String(bad, radix: 16)))"
        }
        return nil
    }

    /// Per-entity topics: `prefix` + id, e.g. `device.location.` + `42`.
    public static func path(_ prefix: String, _ id: String) -> String { prefix + id }
}

/// The public contract of the bus: endpoints, service names and topic prefixes (DESIGN.md, "The bus").
/// Each endpoint is a flag and an environment variable of the executables that use it.
public enum BusContract {
    /// Where `ride-bus` binds event ingress (XSUB): publishers connect here.
    public static let eventIngressBind = "tcp://*:5555"
    /// Where `ride-bus` binds event egress (XPUB): subscribers connect here.
    public static let eventEgressBind = "tcp://*:5556"
    /// Where `ride-bus` binds the 7/MDP broker (ROUTER): clients and workers connect here.
    public static let brokerBind = "tcp://*:5557"

    /// What clients connect to by default (a local bus), with the environment variables that change it.
    public static let publishEndpoint = "tcp://127.0.0.1:5555"
    public static let publishEnvironment = "RIDE_BUS_PUB"
    public static let subscribeEndpoint = "tcp://127.0.0.1:5556"
    public static let subscribeEnvironment = "RIDE_BUS_SUB"
    public static let brokerEndpoint = "tcp://127.0.0.1:5557"
    public static let brokerEnvironment = "RIDE_BROKER"

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
    }

    /// The topic roots each source publishes under. A subscriber sees every sequence of a source
    /// only when its prefixes cover all of that source's roots; otherwise a jump in `sequence` is
    /// just the events it did not ask for (how `ridectl tail` decides to warn about a gap).
    public static let topicRoots: [String: [String]] = [
        "users": ["user."],
        "orders": ["order."],
        "trips": ["trip."],
        "tracking": ["device.location.", "device.status."],  // per device: see deviceSource
        "notifications": ["notification.", "device.command."],
    ]

    /// The source of one device's events: tracking sequences each device's stream on its own, so
    /// a subscriber to `device.location.<id>` sees every sequence of that device (and a gap means a
    /// lost event, not another device's).
    public static func deviceSource(_ deviceID: String) -> String { "tracking/devices/\(deviceID)" }

    /// The topic roots of `source` (per-device sources included).
    public static func roots(of source: String) -> [String]? {
        if let roots = topicRoots[source] { return roots }
        let devicePrefix = "tracking/devices/"
        if source.hasPrefix(devicePrefix) {
            let id = source.dropFirst(devicePrefix.count)
            return ["\(Topics.deviceLocation)\(id)", "\(Topics.deviceStatus)\(id)"]
        }
        return nil
    }

    /// Whether subscribing to `prefixes` receives everything `source` publishes. Sources without
    /// known roots are covered only by a subscription to everything ("").
    public static func prefixes(_ prefixes: [String], cover source: String) -> Bool {
        if prefixes.contains("") { return true }
        guard let roots = roots(of: source) else { return false }
        return roots.allSatisfy { root in prefixes.contains { root.hasPrefix($0) } }
    }

    /// Topic prefixes.
    public enum Topics {
        /// Everything `orders` publishes: subscribe to this, not to one kind, or a sequence gap is ambiguous.
        public static let orderEvents = "order."
        public static let orderStatus = "order.status."
        public static let orderMessage = "order.message."
        public static let orderRated = "order.rated"
        public static let orderOffered = "order.offered"
        public static let orderPaid = "order.paid"
        public static let tripCreated = "trip.created"
        public static let tripDestinationArrival = "trip.destination_arrival"
        public static let tripCompleted = "trip.completed"
        public static let tripETA = "trip.eta"
        public static let deviceLocation = "device.location."
        public static let deviceStatus = "device.status."
        public static let deviceCommand = "device.command."
        public static let userRegistered = "user.registered"
        public static let notification = "notification."
    }
}
