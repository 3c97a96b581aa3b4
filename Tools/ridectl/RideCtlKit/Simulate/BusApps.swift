import Bus
import Foundation
import Logging
import RideContract
import RideModels
import ServiceKit
import Wire

/// The simulated apps on the bus, as an operator's tool: each call names its caller (the bus
/// admits the operator's key to say so), and every ride's events come from one subscription.
struct BusApps: RideApps {
    let client: ServiceClient
    let updates: AsyncStream<RideUpdate>
    private let subscriber: EventSubscriber<LifecycleEvent>
    private let relay: Task<Void, Never>

    init(broker: String, events: String, logger: Logger) async throws {
        var options = MDPClient.Options()
        options.timeout = .seconds(10)
        client = try await ServiceClient(broker: broker, options: options, logger: logger)
        let subscriber = try await EventSubscriber<LifecycleEvent>(
            endpoint: events, prefixes: [Events.orderStatus.topic, Events.tripDestinationArrival.topic], logger: logger)
        let (updates, continuation) = AsyncStream.makeStream(of: RideUpdate.self)
        self.subscriber = subscriber
        self.updates = updates
        relay = Task {
            for await batch in subscriber.deliveries {
                for case .event(let received) in batch {
                    if case .duplicate = received.sequence { continue }  // sent again (at least once): seen already
                    if let update = Self.update(received) { continuation.yield(update) }
                }
            }
            continuation.finish()
        }
    }

    /// The ride an event is about (an order's status, or the arrival of one of its trips), or nil.
    static func update(_ received: ReceivedEvent<LifecycleEvent>) -> RideUpdate? {
        switch received.event.data {
        case .order(let change): return RideUpdate(rideID: change.order.id, change: .status(change.order), seenAt: received.receivedAt)
        case .arrival(let arrival):
            guard case .string(let orderID)? = arrival.data.tripMetadata?["order_id"] else { return nil }
            return RideUpdate(rideID: orderID, change: .arrival(tripID: arrival.data.tripID), seenAt: received.receivedAt)
        case .other: return nil
        }
    }

    func register(_ params: RegisterParams) async throws -> (user: User, deviceCredential: String?) {
        let user = try await client.call(Ops.Users.register, params, timeout: .seconds(30))
        guard user.role == .driver else { return (user, nil) }
        // No log-in (no password hashing for each driver): the operator asks users for the credential.
        return (user, try await client.call(Ops.Users.issueDeviceCredential, UserIDParams(id: user.id), timeout: .seconds(30)).credential)
    }

    func book(from pickup: Place, to dropoff: Place, as rider: String, key: String) async throws -> Order {
        try await client.call(Ops.Orders.create, CreateOrderParams(caller: .rider(rider), pickup: pickup, dropoff: dropoff), key: key)
    }

    func order(_ id: String, as caller: Caller) async throws -> Order {
        try await client.call(Ops.Orders.get, OrderParams(caller: caller, id: id))
    }

    func offers(for driver: String) async throws -> [Order] {
        try await client.call(Ops.Orders.list, ListOrdersParams(caller: .driver(driver), status: .new, limit: 5)).orders
    }

    func act(_ action: RideAction, on id: String, as caller: Caller, reason: String?) async throws {
        let op: Op<OrderParams, Order> =
            switch action {
            case .accept: Ops.Orders.accept
            case .decline: Ops.Orders.decline
            case .cancel: Ops.Orders.cancel
            case .start: Ops.Orders.startRide
            case .end: Ops.Orders.endRide
            }
        _ = try await client.call(op, OrderParams(caller: caller, id: id, reason: reason))
    }

    func share(_ id: String, as rider: String) async throws -> (shareID: String, url: String?) {
        (try await client.call(Ops.Orders.share, OrderParams(caller: .rider(rider), id: id)).shareID, nil)
    }

    func say(_ text: String, on id: String, as caller: Caller, key: String) async throws {
        _ = try await client.call(Ops.Orders.sendMessage, SendMessageParams(caller: caller, id: id, text: text), key: key)
    }

    func rate(_ id: String, as caller: Caller, stars: Int) async throws {
        _ = try await client.call(Ops.Orders.rate, RateParams(caller: caller, id: id, stars: stars))
    }

    func history(of rider: String, before: String?) async throws -> RideHistory {
        try await client.call(Ops.Orders.history, HistoryParams(caller: .rider(rider), before: before, limit: 100))
    }

    func earnings(of driver: String) async throws -> DriverEarnings {
        try await client.call(Ops.Orders.earnings, EarningsParams(caller: .driver(driver), days: 1))
    }

    func follow(_ id: String, as rider: String) async {}
    func unfollow(_ id: String) async {}

    func close() async {
        await subscriber.close()
        relay.cancel()
        await client.close()
    }
}
