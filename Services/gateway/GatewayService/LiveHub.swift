import Bus
import Foundation
import Logging
import RideContract
import RideModels
import ServiceLifecycle
import Wire

/// The gateway's one subscription to the bus, fanned out to the WebSocket connections watching
/// orders: `order.` (statuses and chat) and `trip.eta` for everyone, `device.location.<id>` and
/// `device.status.<id>` only for the drivers of watched orders (the bus filters the rest out). A sequence gap in the `orders`
/// source is filled through `orders.events` before going on, so no watched status is lost.
/// `user.suspended` makes this gateway forget the account's tokens and close its sockets at once.
actor LiveHub {
    /// The tokens this gateway has authenticated lately (its routes' cache).
    nonisolated let tokens = TokenCache()
    /// The topics the gateway's subscriber follows from the start.
    static let prefixes = [Events.orderRoot, Events.tripETA.topic, Events.tripDestinationChanged.topic, Events.userSuspended.topic]

    private let subscriber: EventSubscriber<JSONValue>
    private let platform: PlatformCalls
    private let logger: Logger
    private var watchers: [String: [UUID: AsyncStream<LiveMessage>.Continuation]] = [:]
    /// Connections of `/v1/me/live`, by user: their `notification.<user_id>` events.
    private var userWatchers: [String: [UUID: AsyncStream<LiveMessage>.Continuation]] = [:]
    /// The device of each watched order's driver, while the order is open.
    private var deviceOfOrder: [String: String] = [:]
    private var ordersOfDevice: [String: Set<String>] = [:]

    init(subscriber: EventSubscriber<JSONValue>, platform: PlatformCalls, logger: Logger) {
        self.subscriber = subscriber
        self.platform = platform
        self.logger = logger
    }

    var connectionCount: Int { (watchers.values.map(\.count) + userWatchers.values.map(\.count)).reduce(0, +) }

    /// Starts following `userID`'s notifications (subscribing to their topic for the first connection).
    func watchUser(_ userID: String) -> (UUID, AsyncStream<LiveMessage>) {
        let (stream, continuation) = AsyncStream.makeStream(of: LiveMessage.self, bufferingPolicy: .bufferingNewest(1000))
        let id = UUID()
        if userWatchers[userID, default: [:]].isEmpty { subscriber.subscribe(Events.notification.topic + userID) }
        userWatchers[userID, default: [:]][id] = continuation
        return (id, stream)
    }

    func stopUser(_ userID: String, _ id: UUID) {
        userWatchers[userID]?.removeValue(forKey: id)?.finish()
        if userWatchers[userID]?.isEmpty == true {
            userWatchers[userID] = nil
            subscriber.unsubscribe(Events.notification.topic + userID)
        }
    }

    /// Starts watching `orderID`; messages arrive on the stream until `stop`.
    func watch(_ orderID: String) -> (UUID, AsyncStream<LiveMessage>) {
        let (stream, continuation) = AsyncStream.makeStream(of: LiveMessage.self, bufferingPolicy: .bufferingNewest(1000))
        let id = UUID()
        watchers[orderID, default: [:]][id] = continuation
        return (id, stream)
    }

    func stop(_ orderID: String, _ id: UUID) {
        watchers[orderID]?.removeValue(forKey: id)?.finish()
        if watchers[orderID]?.isEmpty == true {
            watchers[orderID] = nil
            follow(orderID, device: nil)
        }
    }

    /// Follows (or stops following) the position of an order's driver.
    func follow(_ orderID: String, device: String?) {
        let previous = deviceOfOrder[orderID]
        guard previous != device else { return }
        if let previous {
            ordersOfDevice[previous]?.remove(orderID)
            if ordersOfDevice[previous]?.isEmpty == true {
                ordersOfDevice[previous] = nil
                for topic in Self.deviceTopics { subscriber.unsubscribe(topic + previous) }
            }
        }
        deviceOfOrder[orderID] = device
        if let device, watchers[orderID] != nil {
            if ordersOfDevice[device, default: []].isEmpty {
                for topic in Self.deviceTopics { subscriber.subscribe(topic + device) }
            }
            ordersOfDevice[device, default: []].insert(orderID)
        }
    }

    /// What the hub follows of a watched order's driver's device.
    static let deviceTopics = [Events.deviceLocation.topic, Events.deviceStatus.topic]

    /// Follows the driver of `order` while it is open and has one.
    func track(_ order: Order) {
        follow(order.id, device: order.status.hasDriver ? order.driver?.deviceID : nil)
    }

    private func send(_ message: LiveMessage, to orderID: String) {
        for continuation in watchers[orderID]?.values ?? [:].values { continuation.yield(message) }
    }

    /// Routes one event to the connections that watch what it is about. An event whose data is
    /// not its kind's payload reaches no one.
    func route(_ event: CloudEvent<JSONValue>) {
        let data = event.data
        if event.type == Events.userSuspended.type, let userID = data["user_id"]?.stringValue {
            suspended(userID)
        } else if event.type == Events.notification.type, let notification = try? data.decode(UserNotification.self) {
            let message = LiveMessage.notification(LiveNotification(notification: notification))
            for continuation in userWatchers[notification.userID]?.values ?? [:].values { continuation.yield(message) }
        } else if let (orderID, message) = Self.orderMessage(event, about: { watchers[$0] != nil }) {
            if case .status(_, let changed) = message { track(changed.order) }
            send(message, to: orderID)
        } else if Self.estimateEvents.contains(event.type) {
            guard let orderID = TripEvent.orderID(in: data), watchers[orderID] != nil, let trip = try? data.decode(TripEvent.self) else {
                return
            }
            send(.eta(LiveETA(orderID: orderID, tripID: trip.data.tripID, estimate: trip.data.estimate)), to: orderID)
        } else if let (deviceID, message) = Self.deviceMessage(event, about: { ordersOfDevice[$0]?.isEmpty == false }) {
            for orderID in ordersOfDevice[deviceID] ?? [] { send(message(orderID), to: orderID) }
        }
    }

    /// An account suspended: its tokens are no longer taken here, and every connection hears of it
    /// (the relay closes the person's own and passes the message to no one).
    func suspended(_ userID: String) {
        tokens.forget(userID: userID)
        let message = LiveMessage.accountSuspended(userID: userID)
        for continuation in watchers.values.flatMap(\.values) + (userWatchers[userID]?.values.map { $0 } ?? []) {
            continuation.yield(message)
        }
    }

    /// The trip events whose estimate is relayed as `eta`.
    static let estimateEvents: Set<String> = [Events.tripETA.type, Events.tripDestinationChanged.type]

    /// The message a driver device's event makes for each order that follows the device:
    /// `location` or `driver_status`. `about` is asked first, with the device's id read without
    /// decoding the rest: most devices on a busy bus are followed by no one here, and only events
    /// it accepts are decoded.
    static func deviceMessage(_ event: CloudEvent<JSONValue>, about: (String) -> Bool = { _ in true }) -> (
        deviceID: String, message: @Sendable (String) -> LiveMessage
    )? {
        switch event.type {
        case Events.deviceLocation.type:
            guard let id = DeviceLocationEvent.deviceID(in: event.data), about(id),
                let location = try? event.data.decode(DeviceLocationEvent.self)
            else { return nil }
            return (location.deviceID, { .location(Watched(orderID: $0), location) })
        case Events.deviceStatus.type:
            guard let id = DeviceStatusEvent.deviceID(in: event.data), about(id),
                let status = try? event.data.decode(DeviceStatusEvent.self)
            else { return nil }
            return (status.deviceID, { .driverStatus(Watched(orderID: $0), status) })
        default: return nil
        }
    }

    /// The message an `orders` event makes for the watchers of its order: a status, a new
    /// drop-off or a chat message. `about` is asked first, with the order's id read without
    /// decoding the rest (as in `deviceMessage`).
    static func orderMessage(_ event: CloudEvent<JSONValue>, about: (String) -> Bool = { _ in true }) -> (
        orderID: String, message: LiveMessage
    )? {
        guard event.source == BusContract.Service.orders else { return nil }
        switch event.type {
        case Events.orderStatus.type:
            guard let id = OrderStatusChanged.orderID(in: event.data), about(id),
                let changed = try? event.data.decode(OrderStatusChanged.self)
            else { return nil }
            return (changed.order.id, .status(Sequenced(sequence: event.sequence), changed))
        case Events.orderDestinationChanged.type:
            guard let id = DestinationChanged.orderID(in: event.data), about(id),
                let changed = try? event.data.decode(DestinationChanged.self)
            else { return nil }
            return (changed.order.id, .destinationChanged(Sequenced(sequence: event.sequence), changed))
        case Events.orderMessage.type:
            guard let id = ChatMessageSent.orderID(in: event.data), about(id), let sent = try? event.data.decode(ChatMessageSent.self)
            else { return nil }
            let orderID = sent.message.orderID
            return (orderID, .chat(LiveChat(orderID: orderID, sequence: event.sequence, message: sent.message)))
        default: return nil
        }
    }

    /// Follows the bus until shutdown, filling gaps in `orders`' sequence from its `events`.
    func run() async {
        for await batch in subscriber.deliveries {
            for case .event(let received) in batch {
                if case .duplicate = received.sequence { continue }  // sent again (several relays, or at least once): routed already
                if received.event.source == BusContract.Service.orders, case .gap(let gap) = received.sequence, !watchers.isEmpty {
                    logger.warning("live updates: sequence gap in orders; fetching the missed events", metadata: ["gap": "\(gap)"])
                    for missed in (try? await OrderEvents.fetch(platform, after: gap.expected - 1, through: gap.received - 1)) ?? [] {
                        route(missed)
                    }
                }
                route(received.event)
            }
        }
    }
}

/// `orders.events`, paged.
enum OrderEvents {
    /// Events after `after` up to `through` (or the last), at most `limit` of them (nil when there are more: too far behind).
    static func fetch(_ platform: PlatformCalls, after: UInt64, through: UInt64? = nil, limit: Int = 20_000) async throws -> [CloudEvent<
        JSONValue
    >]? {
        var events: [CloudEvent<JSONValue>] = []
        var cursor = after
        while true {
            let page = try await platform.call(Ops.Orders.events, EventsQuery(after: cursor, limit: 1000))
            for event in page.events where through.map({ event.sequence <= $0 }) ?? true { events.append(event) }
            guard let last = page.events.last?.sequence else { return events }
            cursor = last
            if let through, cursor >= through { return events }
            if cursor >= page.lastSequence { return events }
            if events.count > limit { return nil }
        }
    }

    /// The last sequence `orders` has published (or is about to).
    static func lastSequence(_ platform: PlatformCalls) async throws -> UInt64 {
        try await platform.call(Ops.Orders.events, EventsQuery(after: UInt64(UInt32.max), limit: 1)).lastSequence
    }
}

/// The hub as a service of the process.
struct LiveHubService: Service {
    let hub: LiveHub
    let subscriber: EventSubscriber<JSONValue>

    func run() async throws {
        await withGracefulShutdownHandler {
            await hub.run()
        } onGracefulShutdown: {
            Task { await subscriber.close() }
        }
    }
}
