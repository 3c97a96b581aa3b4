import Bus
import Foundation
import Geo
import Logging
import RideModels
import Storage

/// Where new orders are offered: to the `drivers` nearest available drivers within `radius` metres.
public struct DispatchSettings: Sendable, Equatable {
    public var radius: Double = 3000
    public var drivers: Int = 3
    /// An offer nobody accepted within this many seconds expires; the next round looks 1.5 times
    /// farther (up to 5 rounds) at drivers not yet asked.
    public var offerTimeout: Double = 15
    public var maxRounds = 5
    public init() {}

    /// The search radius of round `round` (1 for the first offer).
    public func radius(round: Int) -> Double { radius * pow(1.5, Double(max(0, min(round, maxRounds) - 1))) }
}

/// The `orders` service's ops on the broker. Every op names its caller; the state machine decides
/// who may do what (403) and what is legal now (409 with the current status).
struct OrdersOps {
    let store: OrderStore
    let platform: ServiceClient
    let relay: OutboxRelay
    let dispatch: DispatchSettings
    let fares: FareSchedule
    let logger: Logger

    func router(instance: String) -> OpRouter {
        var router = OpRouter(service: BusContract.Service.orders, instance: instance)
        router.on("create") { (params: CreateOrderParams, _) -> Replied<Order> in Replied(status: Status.created, body: try await create(params)) }
        router.on("get") { (params: OrderParams, _) -> Order in
            let order = try await existing(params.id)
            guard OrderStateMachine.canView(order.facts, by: OrderActor(params.caller)) else { throw forbidden("this order is not yours") }
            return order
        }
        router.on("list") { (params: ListOrdersParams, _) -> OrderList in try await list(params) }
        router.on("accept") { (params: OrderParams, _) -> Order in try await accept(params) }
        router.on("decline") { (params: OrderParams, _) -> Order in
            try await transition(.decline, params) { order in
                order.offeredTo.removeAll { $0 == params.caller.id }
                order.declinedBy.append(params.caller.id)
            }
        }
        router.on("start_ride") { (params: OrderParams, _) -> Order in try await transition(.startRide, params) }
        router.on("end_ride") { (params: OrderParams, _) -> Order in try await endRide(params) }
        router.on("cancel") { (params: OrderParams, _) -> Order in
            if let reason = params.reason, reason.count > 500 { throw ServiceError.unprocessable("invalid_params", "reason: must be at most 500 characters") }
            return try await transition(.cancel, params) { order in
                order.cancelReason = params.reason
                order.offeredTo = []
            }
        }
        router.on("events") { (query: EventsQuery, _) -> EventsPage in
            try await store.database.read { db in try Outbox.page(db, source: BusContract.Service.orders, query: query) }
        }
        // For operators (the gateway's dashboard), like `events`: no caller, nothing personal beyond names.
        router.on("stats") { (params: StatsParams, _) -> OrderStats in
            let limit = params.openLimit ?? 200
            guard (0...1000).contains(limit) else { throw ServiceError.unprocessable("invalid_params", "open_limit: must be from 0 to 1000, got \(limit)") }
            return try await store.stats(openLimit: limit)
        }
        return router
    }

    // MARK: Ops

    func create(_ params: CreateOrderParams) async throws -> Order {
        guard params.caller.role == .rider else { throw forbidden("only a rider may book a ride") }
        if let problem = PlaceRules.problem(pickup: params.pickup, dropoff: params.dropoff) { throw ServiceError.unprocessable("invalid_params", problem) }
        let rider = try await user(params.caller.id, role: .rider)
        let now = Date()
        var order = Order(id: OrderID.make(), status: .new, rider: rider, pickup: params.pickup, dropoff: params.dropoff, createdAt: now, updatedAt: now)
        order.offeredTo = await nearestDrivers(to: params.pickup, radius: dispatch.radius, excluding: [])
        order.offerHistory = order.offeredTo
        order.dispatchRound = 1
        order.offeredAt = now
        do {
            try await store.create(order)
        } catch OrderStore.Failure.openOrderExists(let open) {
            throw ServiceError.conflict("open_order_exists", "rider \(rider.id) already has an open order, \(open); cancel or finish it first")
        }
        relay.notify()
        return order
    }

    func list(_ params: ListOrdersParams) async throws -> OrderList {
        let limit = params.limit ?? 50
        guard (1...500).contains(limit) else { throw ServiceError.unprocessable("invalid_params", "limit: must be from 1 to 500, got \(limit)") }
        if let near = params.near {
            guard params.caller.role == .driver else { throw forbidden("only drivers look for orders near a point") }
            guard let status = params.status else { throw ServiceError.unprocessable("invalid_params", "status: required with near") }
            guard status == .new else { throw forbidden("drivers look only for NEW orders near them") }
            if let problem = PlaceRules.problem(latitude: near.latitude, longitude: near.longitude, field: "near") {
                throw ServiceError.unprocessable("invalid_params", problem)
            }
            guard near.radius.isFinite, near.radius > 0, near.radius <= 50_000 else {
                throw ServiceError.unprocessable("invalid_params", "near.radius: must be from 0 (excluded) to 50000 metres, got \(near.radius)")
            }
            let center = GeoPoint(latitude: near.latitude, longitude: near.longitude)
            return OrderList(orders: try await store.orders(status: status, near: center, radius: near.radius, limit: limit))
        }
        switch params.caller.role {
        case .rider: return OrderList(orders: try await store.orders(riderID: params.caller.id, status: params.status, limit: limit))
        case .driver: return OrderList(orders: try await store.orders(driverID: params.caller.id, status: params.status, limit: limit))
        }
    }

    /// `REACHED_DROPOFF → COMPLETED` with the ride's summary and fare, so the `COMPLETED` event
    /// carries them: the dropoff trip is completed first (idempotent, so a retried end_ride after
    /// a failure is safe); if trips cannot be reached the order stays `REACHED_DROPOFF` and the
    /// driver is told to try again (503).
    func endRide(_ params: OrderParams) async throws -> Order {
        let current = try await existing(params.id)
        try check(.endRide, current, params.caller)
        guard let tripID = current.tripID else { throw ServiceError(status: 500, code: "internal", message: "order \(params.id) has no dropoff trip") }
        let trip: Trip
        do {
            trip = try await platform.call(BusContract.Service.trips, "complete", TripIDParams(tripID: tripID), as: Trip.self)
        } catch {
            throw ServiceError(status: Status.unavailable, code: "trips_unavailable", message: "the ride's trip could not be completed (\(error)); try again")
        }
        let summary = trip.summary
        let fare = summary.map { summary in
            Fare(currency: fares.currency, totalCents: fares.fareCents(metres: Double(summary.distance), seconds: Double(summary.duration)),
                 distanceMetres: summary.distance, durationSeconds: summary.duration)
        }
        return try await transition(.endRide, params) { order in
            order.summary = summary
            order.fare = fare
        }
    }

    func accept(_ params: OrderParams) async throws -> Order {
        // Checked before the driver's record is fetched, and again inside the transaction: the
        // first accept commits ACCEPTED; a racing one finds it and gets 409.
        let current = try await existing(params.id)
        try check(.accept, current, params.caller)
        let driver = try await user(params.caller.id, role: .driver)
        return try await transition(.accept, params) { order in
            order.driver = driver
            order.offeredTo = []
        }
    }

    /// Applies `action` by the caller in one transaction, after the state machine says yes.
    func transition(_ action: OrderAction, _ params: OrderParams, _ change: @escaping @Sendable (inout Order) -> Void = { _ in }) async throws -> Order {
        let caller = params.caller
        do {
            let (order, previous) = try await store.change(id: params.id) { order in
                let next = try Self.decide(action, order, caller)
                order.status = next
                change(&order)
            }
            if order.status != previous { relay.notify() }
            return order
        } catch OrderStore.Failure.unknownOrder {
            throw unknownOrder(params.id)
        }
    }

    // MARK: Helpers

    func check(_ action: OrderAction, _ order: Order, _ caller: Caller) throws {
        _ = try Self.decide(action, order, caller)
    }

    static func decide(_ action: OrderAction, _ order: Order, _ caller: Caller) throws -> OrderStatus {
        try decide(action, order, by: OrderActor(caller))
    }

    static func decide(_ action: OrderAction, _ order: Order, by actor: OrderActor) throws -> OrderStatus {
        switch OrderStateMachine.apply(action, to: order.facts, by: actor) {
        case .success(let next): return next
        case .failure(let refusal):
            switch refusal {
            case .forbidden(let reason): throw ServiceError.forbidden("forbidden", reason)
            case .illegal(_, let current):
                throw ServiceError.conflict("illegal_transition", "\(refusal.message) (current status: \(current.rawValue))")
            }
        }
    }

    func existing(_ id: String) async throws -> Order {
        guard let order = try await store.order(id: id) else { throw unknownOrder(id) }
        return order
    }

    /// The user `id` as `users` knows them; 422 when there is none or the role differs.
    func user(_ id: String, role: UserRole) async throws -> User {
        let reply = try await platform.callRaw(BusContract.Service.users, "get", json: JSONCoding.encode(UserIDParams(id: id)))
        if reply.status == Status.notFound { throw ServiceError.unprocessable("unknown_user", "caller.id: no \(role.rawValue) with id \(id)") }
        if let error = reply.serviceError { throw error }
        let user = try JSONCoding.decode(User.self, from: reply.json)
        guard user.role == role else { throw ServiceError.forbidden("forbidden", "user \(id) is a \(user.role.rawValue), not a \(role.rawValue)") }
        return user
    }

    /// A dispatch round for a `NEW` order whose offers expired or were all declined: the nearest
    /// available drivers not yet asked, one radius step farther. Conditional on the version read,
    /// so a racing accept wins.
    func redispatch(_ order: Order, now: Date) async throws {
        let round = (order.dispatchRound ?? 1) + 1
        let drivers = await nearestDrivers(to: order.pickup, radius: dispatch.radius(round: round), excluding: order.offerHistory)
        let version = order.version
        _ = try await store.change(id: order.id, now: now) { order in
            guard order.status == .new, order.version == version else { return }
            order.offeredTo = drivers
            order.offerHistory += drivers.filter { !order.offerHistory.contains($0) }
            order.dispatchRound = round
            order.offeredAt = now
        }
    }

    /// The nearest available drivers (their devices' `user_id` metadata), nearest first. Tracking
    /// being away leaves the order unoffered rather than failing the booking.
    func nearestDrivers(to place: Place, radius: Double, excluding declined: [String]) async -> [String] {
        let query = NearbyQuery(location: GeoJSONPoint(GeoPoint(latitude: place.latitude, longitude: place.longitude)),
                                radius: radius, limit: max(10, (dispatch.drivers + declined.count) * 2), availableOnly: true)
        do {
            let result = try await platform.call(BusContract.Service.tracking, "nearby", query, as: NearbyResult.self, timeout: .seconds(2))
            var drivers: [String] = []
            for device in result.devices {
                guard case .string(let userID)? = device.metadata["user_id"], !declined.contains(userID), !drivers.contains(userID) else { continue }
                drivers.append(userID)
                if drivers.count == dispatch.drivers { break }
            }
            return drivers
        } catch {
            logger.warning("dispatch: tracking.nearby failed; the order waits unoffered", metadata: ["error": "\(error)"])
            return []
        }
    }

    func forbidden(_ message: String) -> ServiceError { ServiceError.forbidden("forbidden", message) }

    func unknownOrder(_ id: String) -> ServiceError { ServiceError.notFound("unknown_order", "no order with id \(id)") }
}

/// Order ids: `o-` and 16 random hex digits.
enum OrderID {
    static func make() -> String {
        var generator = SystemRandomNumberGenerator()
        return "o-" + String(format: "%016llx", generator.next() as UInt64)
    }
}

/// What pickup and dropoff places must be. Each problem names the field.
public enum PlaceRules {
    public static func problem(latitude: Double, longitude: Double, field: String) -> String? {
        guard latitude.isFinite, (-90...90).contains(latitude) else { return "\(field).latitude: must be a number from -90 to 90, got \(latitude)" }
        guard longitude.isFinite, (-180...180).contains(longitude) else { return "\(field).longitude: must be a number from -180 to 180, got \(longitude)" }
        return nil
    }

    public static func problem(pickup: Place, dropoff: Place) -> String? {
        for (place, field) in [(pickup, "pickup"), (dropoff, "dropoff")] {
            if let problem = problem(latitude: place.latitude, longitude: place.longitude, field: field) { return problem }
            if let address = place.address, address.count > 300 { return "\(field).address: must be at most 300 characters" }
        }
        let distance = GeoPoint(latitude: pickup.latitude, longitude: pickup.longitude).distance(to: GeoPoint(latitude: dropoff.latitude, longitude: dropoff.longitude))
        if distance < 50 { return "dropoff: must be at least 50 m from pickup, is \(Int(distance)) m" }
        return nil
    }
}

extension Order {
    /// What the state machine needs to know of this order.
    var facts: OrderFacts {
        OrderFacts(status: status, riderID: rider.id, driverID: driver?.id, offeredTo: Set(offeredTo), formerlyOffered: Set(offerHistory))
    }
}

extension OrderActor {
    init(_ caller: Caller) {
        self = caller.role == .rider ? .rider(id: caller.id) : .driver(id: caller.id)
    }
}
