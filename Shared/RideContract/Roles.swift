import Bus

/// Every role on a secured bus, declared once: which services its processes serve, which ops they
/// call, which topics they hear. What a role publishes is not written here: it is every event kind
/// whose `source` is the role (`Events`), so a topic has one publisher. The bus enforces these
/// (`BusPolicy`); `docs/security.md`'s table of roles is derived from them, and a test runs the
/// whole platform on a secured bus to show the lists are enough.
///
/// A CURVE client key gets its role from its name (`clients/orders.pub` is `orders`; `operator-ana`
/// is an `operator`), made by `ridectl keys`.
public enum Roles {
    public static let users = BusRole(
        BusContract.Service.users, "the users service: accounts, sessions, device credentials, ratings",
        serves: [BusContract.Service.users],
        calls: [Ops.Orders.events.descriptor],  // the ratings reactor's catch-up
        subscribes: [Events.orderRoot])

    public static let orders = BusRole(
        BusContract.Service.orders, "the orders service: booking, dispatch, the lifecycle, payments, and the reactor that drives trips",
        serves: [BusContract.Service.orders],
        calls: [
            Ops.Users.get.descriptor, Ops.Users.places.descriptor, Ops.Tracking.nearby.descriptor, Ops.Tracking.device.descriptor,
            Ops.Trips.create.descriptor, Ops.Trips.get.descriptor, Ops.Trips.complete.descriptor, Ops.Trips.changeDestination.descriptor,
            Ops.Trips.events.descriptor,
        ],
        subscribes: [Events.orderRoot, Events.tripRoot, Events.deviceStatus.topic])

    public static let trips = BusRole(
        BusContract.Service.trips, "the trips service: trips to a destination, arrivals, estimates, share ids",
        serves: [BusContract.Service.trips],
        calls: [Ops.Tracking.device.descriptor, Ops.Tracking.locations.descriptor],
        subscribes: [Events.deviceLocation.topic, Events.tripRoot])

    /// Tracking's shards also serve `tracking.shard.K` and ask one another there.
    public static let tracking = BusRole(
        BusContract.Service.tracking, "the tracking service and its shards: device ingest, positions, Nearby",
        serves: [BusContract.Service.tracking, BusContract.Service.trackingShards],
        calls: [Ops.Users.get.descriptor, Ops.Users.verifyDeviceCredentials.descriptor],
        callsServices: [BusContract.Service.trackingShards],
        subscribes: [Events.deviceCommand.topic, Events.userSuspended.topic, Events.userApprovalLapsed.topic])

    public static let notifications = BusRole(
        BusContract.Service.notifications, "the notifications service: inboxes, pushes, device commands, signed webhooks",
        serves: [BusContract.Service.notifications],
        calls: [Ops.Orders.events.descriptor, Ops.Trips.events.descriptor],
        subscribes: [Events.orderRoot, Events.tripRoot])

    /// The internet's door: the ops behind the apps' routes, the share pages, the HyperTrack routes
    /// and the dashboard (each route authenticates its caller and names them in the params; every
    /// orders op is one) — not the operators' bus-only ops (device credentials, webhooks) nor any worker.
    public static let gateway = BusRole(
        "gateway", "the HTTP and WebSocket gateway: calls on behalf of the callers it authenticated",
        calls: gatewayUsersOps + RideContract.ops(of: BusContract.Service.orders)
            + [Ops.Trips.create.descriptor, Ops.Trips.get.descriptor, Ops.Trips.getByShare.descriptor, Ops.Trips.complete.descriptor]
            + [
                Ops.Tracking.nearby.descriptor, Ops.Tracking.device.descriptor, Ops.Tracking.locations.descriptor,
                Ops.Tracking.ingest.descriptor,
            ]
            + [Ops.Notifications.list.descriptor, Ops.Notifications.registerPushToken.descriptor],
        subscribes: [
            Events.orderRoot, Events.tripRoot, Events.notification.topic, Events.deviceLocation.topic, Events.deviceStatus.topic,
            Events.userSuspended.topic,
        ])

    /// Named one by one, so that a new users op (device credentials are users') is the operators' until granted here.
    private static let gatewayUsersOps: [OpDescriptor] = [
        Ops.Users.register.descriptor, Ops.Users.login.descriptor, Ops.Users.refresh.descriptor, Ops.Users.logout.descriptor,
        Ops.Users.authenticate.descriptor, Ops.Users.get.descriptor, Ops.Users.update.descriptor, Ops.Users.savePlace.descriptor,
        Ops.Users.places.descriptor, Ops.Users.deletePlace.descriptor, Ops.Users.loginWithIdentity.descriptor,
        Ops.Users.linkIdentity.descriptor, Ops.Users.putPhoto.descriptor, Ops.Users.photo.descriptor,
        // The operators' dashboard, which the gateway serves behind the operator's credentials.
        Ops.Users.suspend.descriptor, Ops.Users.reinstate.descriptor, Ops.Users.search.descriptor,
        // Drivers' documents: uploaded by the driver, looked at, approved and withdrawn by the operator.
        Ops.Users.putDocument.descriptor, Ops.Users.document.descriptor, Ops.Users.approveDriver.descriptor,
        Ops.Users.withdrawApproval.descriptor,
    ]

    /// People running the platform with `ridectl` (`status`, `tail`, `call`, `simulate`): every op,
    /// every topic; no worker, and events only under `ops.` (`ridectl publish`), never a service's.
    public static let `operator` = BusRole(
        "operator", "operators' tools (ridectl): every op and every topic, no worker, publishes only under ops.",
        callsServices: ["*"], subscribes: [""], publishesExtra: ["ops."])

    /// `ridectl bench`'s load: its own echo service and topics, nothing of the platform's.
    public static let bench = BusRole(
        "bench", "ridectl bench's load generators: the bench service and bench. topics only",
        serves: ["bench*"], callsServices: ["bench*"], subscribes: ["bench."], publishesExtra: ["bench."])

    public static let all = [users, orders, trips, tracking, notifications, gateway, `operator`, bench]

    /// The policy the bus enforces.
    public static var policy: BusPolicy {
        BusPolicy(roles: Dictionary(uniqueKeysWithValues: all.map { ($0.name, $0.permissions) }))
    }

    /// The role that publishes `topic` (the source of its event kind), if any.
    public static func publisher(ofTopic topic: String) -> String? {
        RideContract.events.first { topic.hasPrefix($0.topic) }?.source
    }
}

/// One role: a name, what it is, and what it may do (see `Roles`).
public struct BusRole: Sendable {
    public let name: String
    public let summary: String
    public let serves: [String]
    public let calls: [OpDescriptor]
    /// Services every op of which it may call (a name ending in `*` is a prefix).
    public let callsServices: [String]
    public let subscribes: [String]
    /// Topics it may publish besides its event kinds' (for tools, never a service's topic).
    public let publishesExtra: [String]

    init(
        _ name: String, _ summary: String, serves: [String] = [], calls: [OpDescriptor] = [], callsServices: [String] = [],
        subscribes: [String] = [], publishesExtra: [String] = []
    ) {
        (self.name, self.summary, self.serves, self.calls, self.callsServices) = (name, summary, serves, calls, callsServices)
        (self.subscribes, self.publishesExtra) = (subscribes, publishesExtra)
    }

    /// The role as a process holds it (`ServiceCommand.busRole`).
    public var held: HeldRole { HeldRole(name: name, permissions: permissions) }

    /// The topic prefixes of the event kinds it is the source of, and its extras.
    public var publishes: [String] {
        RideContract.events.filter { $0.source == name }.map(\.topic) + publishesExtra
    }

    /// As the bus checks them. Every role may also ask any service's `ping` (the health probe every
    /// worker answers) and hear the bus's welcome.
    public var permissions: BusPermissions {
        var calls: [String: Set<String>] = [:]
        for op in self.calls { calls[op.service, default: []].insert(op.name) }
        for service in callsServices { calls[service] = [] }
        if calls["*"] == nil { calls["*", default: []].insert("ping") }
        return BusPermissions(serves: serves, calls: calls, publishes: publishes, subscribes: subscribes + [EventForwarder.welcome])
    }
}
