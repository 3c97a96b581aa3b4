import Bus
import Foundation
import Geo
import Logging
import RideContract
import RideModels
import Roads
import ServiceStorage
import Storage
import Wire

/// The `orders` service's ops on the broker. Every op names its caller; the state machine decides
/// who may do what (403) and what is legal now (409 with the current status).
struct OrdersOps {
    let store: any OrderStorage
    let platform: ServiceClient
    let relay: OutboxRelay
    let dispatch: DispatchSettings
    let fares: FareSchedule
    let surge: SurgePolicy
    let payments: PaymentCapture
    let logger: Logger
    let routes = RouteModel()
    /// Where quotes' routes come from (road data, or the straight line).
    var roads: any RouteProvider = StraightLineRoutes()
    /// Told of each order this instance ended, with its final status (`COMPLETED` or `CANCELLED`): the rides counters.
    var ended: @Sendable (OrderStatus) -> Void = { _ in }
    /// How long a ride's share link works after the ride ended (`--share-lifetime-s`).
    var shareLifetime = ShareRules.lifetimeAfterRide
    /// When a ride may leave the script: a reported arrival, a no-show (`--arrival-radius-m`, `--no-show-wait-s`).
    var offScript = OffScriptRules()

    func router(instance: String) -> OpRouter {
        var router = OpRouter(service: BusContract.Service.orders, instance: instance)
        // Every order a caller gets is shown as its role may see it (`OrderPrivacy`).
        router.on(Ops.Orders.create) { (params: CreateOrderParams, _) -> Replied<Order> in
            let replied = try await create(params)
            return Replied(status: replied.status, body: OrderPrivacy.shown(replied.body, to: params.caller))
        }
        router.on(Ops.Orders.get) { (params: OrderParams, _) -> Order in OrderPrivacy.shown(try await viewed(params), to: params.caller) }
        router.on(Ops.Orders.list) { (params: ListOrdersParams, _) -> OrderList in
            var list = try await list(params)
            list.orders = OrderPrivacy.shown(list.orders, to: params.caller)
            return list
        }
        router.on(Ops.Orders.accept) { (params: OrderParams, _) -> Order in OrderPrivacy.shown(try await accept(params), to: params.caller)
        }
        router.on(Ops.Orders.decline) { (params: OrderParams, _) -> Order in
            OrderPrivacy.shown(try await decline(params), to: params.caller)
        }
        router.on(Ops.Orders.startRide) { (params: OrderParams, _) -> Order in
            OrderPrivacy.shown(try await transition(.startRide, params), to: params.caller)
        }
        router.on(Ops.Orders.endRide) { (params: OrderParams, _) -> Order in
            OrderPrivacy.shown(try await endRide(params), to: params.caller)
        }
        router.on(Ops.Orders.cancel) { (params: OrderParams, _) -> Order in OrderPrivacy.shown(try await cancel(params), to: params.caller)
        }
        router.on(Ops.Orders.arrive) { (params: OrderParams, _) -> Order in OrderPrivacy.shown(try await arrive(params), to: params.caller)
        }
        router.on(Ops.Orders.noShow) { (params: OrderParams, _) -> Order in OrderPrivacy.shown(try await noShow(params), to: params.caller)
        }
        router.on(Ops.Orders.changeDestination) { (params: ChangeDestinationParams, _) -> Order in
            OrderPrivacy.shown(try await changeDestination(params), to: params.caller)
        }
        registerChat(on: &router)
        router.on(Ops.Orders.estimate) { (params: EstimateParams, _) -> FareEstimate in try await estimate(params) }
        router.on(Ops.Orders.nearbyCars) { (params: NearbyCarsParams, _) -> NearbyCars in try await nearbyCars(params) }
        router.on(Ops.Orders.rate) { (params: RateParams, _) -> Order in OrderPrivacy.shown(try await rate(params), to: params.caller) }
        router.on(Ops.Orders.history) { (params: HistoryParams, _) -> RideHistory in try await history(params) }
        router.on(Ops.Orders.earnings) { (params: EarningsParams, _) -> DriverEarnings in try await earnings(params) }
        router.on(Ops.Orders.payment) { (params: OrderParams, _) -> Payment in try await payment(params) }
        router.on(Ops.Orders.retryPayment) { (params: OrderParams, _) -> Payment in try await retryPayment(params) }
        // For operators (the gateway's dashboard, HTTP Basic): no caller.
        router.on(Ops.Orders.refund) { (params: RefundParams, _) -> Payment in
            let refunded = try await payments.refund(try await existing(params.id))
            relay.notify()
            return refunded
        }
        registerShares(on: &router)
        router.on(Ops.Orders.events) { (query: EventsQuery, _) -> EventsPage in
            try await store.eventLog.page(source: BusContract.Service.orders, query: query)
        }
        // For operators (the gateway's dashboard), like `events`: no caller, nothing personal beyond names.
        router.on(Ops.Orders.stats) { (params: StatsParams, _) -> OrderStats in try await stats(params) }
        registerCardOps(&router)
        ReportOps(orders: self).register(on: &router)
        return router
    }

    // MARK: Ops

    /// `201` and the new order, or `200` and the rider's open order when this booking repeats it.
    func create(_ params: CreateOrderParams) async throws -> Replied<Order> {
        guard params.caller.role == .rider else { throw forbidden("only a rider may book a ride") }
        let (pickup, dropoff) = try await places(
            of: params.caller, pickup: params.pickup, pickupID: params.pickupPlaceID,
            dropoff: params.dropoff, dropoffID: params.dropoffPlaceID)
        let rider = try await user(params.caller.id, role: .rider)
        let multiplier = await surgeMultiplier(at: pickup, counting: 1)
        let now = Date()
        var order = Order(id: OrderID.make(), status: .new, rider: rider, pickup: pickup, dropoff: dropoff, createdAt: now, updatedAt: now)
        order.surge = multiplier > 1 ? multiplier : nil
        order.offeredTo = await nearestDrivers(to: pickup, radius: dispatch.radius, excluding: [])
        order.offerHistory = order.offeredTo
        order.dispatchRound = 1
        order.offeredAt = now
        do {
            try await store.create(order)
        } catch OrderStoreFailure.openOrderExists(let open) {
            if let same = try await store.order(id: open), Self.isRepeatedBooking(same, of: order) {
                return Replied(status: Status.ok, body: same)
            }
            throw ServiceError.conflict(
                "open_order_exists", "rider \(rider.id) already has an open order, \(open); cancel or finish it first")
        }
        relay.notify()
        return Replied(status: Status.created, body: order)
    }

    /// Whether `booking` repeats the rider's open order `open`: the same pickup and dropoff, while
    /// it still waits for a driver, within a minute. A booking retried after a late reply (or a
    /// double tap) then gets the ride it made (200, as `users.register` answers a repeated
    /// registration), not a 409.
    static func isRepeatedBooking(_ open: Order, of booking: Order) -> Bool {
        open.status == .new && open.rider.id == booking.rider.id && open.pickup == booking.pickup && open.dropoff == booking.dropoff
            && booking.createdAt.timeIntervalSince(open.createdAt) < 60
    }

    func list(_ params: ListOrdersParams) async throws -> OrderList {
        let limit = params.limit ?? 50
        if let near = params.near {
            guard params.caller.role == .driver else { throw forbidden("only drivers look for orders near a point") }
            guard let status = params.status else { throw ServiceError.unprocessable("invalid_params", "status: required with near") }
            guard status == .new else { throw forbidden("drivers look only for NEW orders near them") }
            let center = GeoPoint(latitude: near.latitude, longitude: near.longitude)
            // What a driver may accept: the orders offered to them (dispatch offers the nearest first).
            return OrderList(
                orders: try await store.orders(
                    status: status, near: center, radius: near.radius ?? ListOrdersParams.Near.defaultRadius, offeredTo: params.caller.id,
                    limit: limit))
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
        if try check(.endRide, current, params.caller) == .repeated { return current }
        guard let tripID = current.tripID else {
            throw ServiceError(status: 500, code: "internal", message: "order \(params.id) has no dropoff trip")
        }
        let trip: Trip
        do {
            trip = try await platform.call(Ops.Trips.complete, TripIDParams(tripID: tripID))
        } catch {
            throw ServiceError(
                status: Status.unavailable, code: "trips_unavailable",
                message: "the ride's trip could not be completed (\(error)); try again")
        }
        let summary = trip.summary
        let fare = summary.map { summary in
            Fare(
                currency: fares.currency,
                totalCents: fares.fareCents(metres: Double(summary.distance), seconds: Double(summary.duration), surge: current.surge ?? 1),
                distanceMetres: summary.distance, durationSeconds: summary.duration, surge: current.surge)
        }
        return try await transition(.endRide, params) { order, _ in
            order.summary = summary
            order.fare = fare
        }
    }

    func accept(_ params: OrderParams) async throws -> Order {
        // Checked before the driver's record is fetched, and again inside the transaction: the
        // first accept commits ACCEPTED; a racing one finds it and gets 409.
        let current = try await existing(params.id)
        if try check(.accept, current, params.caller) == .repeated { return current }
        let driver = try await user(params.caller.id, role: .driver)
        do {
            return try await transition(.accept, params) { order, _ in
                order.driver = driver
                order.offeredTo = []
            }
        } catch OrderStoreFailure.driverBusy(let driver, let open) {
            throw ServiceError.conflict("driver_busy", "driver \(driver) already has an open order, \(open); finish or cancel it first")
        }
    }

    /// A driver declines an offer: it goes to the next nearest available driver not yet asked
    /// (in the same transaction, with `order.offered` so they hear of it).
    func decline(_ params: OrderParams) async throws -> Order {
        let current = try await existing(params.id)
        _ = try check(.decline, current, params.caller)
        // Once: declining again must not pass the order on again (one driver could push it to every driver in range).
        if current.declinedBy.contains(params.caller.id) { throw Self.alreadyDeclined(params) }
        let next = await nearestDrivers(
            to: current.pickup, radius: dispatch.radius(round: current.dispatchRound ?? 1),
            excluding: current.offerHistory + [params.caller.id], count: 1)
        return try await transition(
            .decline, params,
            { order, _ in
                guard !order.declinedBy.contains(params.caller.id) else { return }  // a racing second decline changes nothing
                order.declinedBy.append(params.caller.id)
                OfferRules.passOn(&order, from: params.caller.id, to: next)
            }, sideEvents: Self.offeredEvents)
    }

    static func alreadyDeclined(_ params: OrderParams) -> ServiceError {
        ServiceError.conflict("already_declined", "driver \(params.caller.id) already declined order \(params.id)")
    }

    /// `order.offered` for the drivers a change newly offers a `NEW` order to.
    @Sendable static func offeredEvents(before: Order, after: Order) -> [OrderSideEvent] {
        let fresh = after.offeredTo.filter { !before.offeredTo.contains($0) }
        guard after.status == .new, !fresh.isEmpty else { return [] }
        return [
            OrderSideEvent(
                Events.orderOffered,
                data: OrderOffered(orderID: after.id, drivers: fresh, pickup: after.pickup, round: after.dispatchRound ?? 1))
        ]
    }

    func rate(_ params: RateParams) async throws -> Order {
        let caller = params.caller
        do {
            let (order, _) = try await store.change(
                id: params.id,
                sideEvents: { before, after in
                    let given = caller.role == .rider ? after.ratingByRider : after.ratingByDriver
                    let already = caller.role == .rider ? before.ratingByRider : before.ratingByDriver
                    guard let given, already == nil, let ratee = ConversationRules.otherParty(of: caller, on: after) else { return [] }
                    return [
                        OrderSideEvent(
                            Events.orderRated,
                            data: OrderRated(orderID: after.id, raterID: caller.id, raterRole: caller.role, rateeID: ratee, rating: given))
                    ]
                }
            ) { order in
                if case .failure(let refusal) = ConversationRules.ratee(of: caller, on: order) { throw Self.error(refusal) }
                let rating = RatingGiven(stars: params.stars, comment: params.comment, createdAt: Date())
                if caller.role == .rider { order.ratingByRider = rating } else { order.ratingByDriver = rating }
            }
            relay.notify()
            return order
        } catch OrderStoreFailure.unknownOrder {
            throw unknownOrder(params.id)
        }
    }

    func sendMessage(_ params: SendMessageParams) async throws -> ChatMessage {
        let caller = params.caller
        do {
            let message = try await store.appendMessage(orderID: params.id) { order, number in
                switch ConversationRules.recipient(of: caller, on: order) {
                case .failure(let refusal): throw Self.error(refusal)
                case .success(let recipient):
                    return ChatMessage(
                        id: "\(order.id)-m\(number)", orderID: order.id, number: number, senderID: caller.id, senderRole: caller.role,
                        recipientID: recipient, text: params.text, sentAt: Date())
                }
            }
            relay.notify()
            return message
        } catch OrderStoreFailure.unknownOrder {
            throw unknownOrder(params.id)
        }
    }

    static func error(_ refusal: ConversationRules.Refusal) -> ServiceError {
        switch refusal {
        case .notAParty: ServiceError.forbidden("forbidden", "only the rider and the driver of this order may do that")
        case .notNow(let why): ServiceError.conflict("not_now", why)
        }
    }

    /// A fare before booking: the route model's distance and duration between the places, at the surge now.
    func estimate(_ params: EstimateParams) async throws -> FareEstimate {
        guard params.caller.role == .rider else { throw forbidden("fare estimates are for riders booking a ride") }
        let (pickup, dropoff) = try await places(
            of: params.caller, pickup: params.pickup, pickupID: params.pickupPlaceID,
            dropoff: params.dropoff, dropoffID: params.dropoffPlaceID)
        let (from, to) = (pickup.point, dropoff.point)
        let route = await route(from: from, to: to)
        return fareEstimate(along: [route], surge: await surgeMultiplier(at: pickup, counting: 1), pickup: pickup, dropoff: dropoff)
    }

    /// The available cars near a point as a rider may see them (`NearbyCarsRules`), with the fare
    /// of a trip from there when a dropoff is given (the estimate above, surge included).
    func nearbyCars(_ params: NearbyCarsParams) async throws -> NearbyCars {
        guard params.caller.role == .rider else { throw forbidden("nearby cars are for riders booking a ride") }
        let pickup = Place(latitude: params.latitude, longitude: params.longitude)
        var quote: FareEstimate?
        if let dropoff = try NearbyCarsRules.dropoff(params) {
            quote = try await estimate(EstimateParams(caller: params.caller, pickup: pickup, dropoff: dropoff))
        }
        let point = pickup.point
        let query = NearbyQuery(
            location: GeoJSONPoint(point), radius: params.radius ?? NearbyCarsParams.defaultRadius, limit: NearbyCarsParams.maxCars * 2,
            availableOnly: true)
        let devices = try await platform.call(Ops.Tracking.nearby, query, timeout: .seconds(2)).devices
        var cars = NearbyCarsRules.cars(devices, to: point, model: routes, now: Date())
        cars.quote = quote
        return cars
    }

    /// Pickup and dropoff, each given as a place or as one of the rider's saved places, checked.
    func places(of caller: Caller, pickup: Place?, pickupID: String?, dropoff: Place?, dropoffID: String?) async throws -> (Place, Place) {
        var saved: [SavedPlace]?
        func resolve(_ place: Place?, _ id: String?, _ field: String) async throws -> Place {
            switch (place, id) {
            case (let place?, nil): return place
            case (nil, let id?):
                if saved == nil {
                    saved = try await platform.call(Ops.Users.places, PlacesParams(userID: caller.id)).places
                }
                guard let found = saved?.first(where: { $0.id == id }) else {
                    throw ServiceError.unprocessable("invalid_params", "\(field)_place_id: no saved place \(id.prefix(64)) of this user")
                }
                return found.place
            case (nil, nil): throw ServiceError.unprocessable("invalid_params", "\(field): required (a place, or \(field)_place_id)")
            case (_?, _?): throw ServiceError.unprocessable("invalid_params", "\(field) and \(field)_place_id: give one, not both")
            }
        }
        let from = try await resolve(pickup, pickupID, "pickup")
        let to = try await resolve(dropoff, dropoffID, "dropoff")
        if let problem = PlaceRules.problem(pickup: from, dropoff: to) { throw ServiceError.unprocessable("invalid_params", problem) }
        return (from, to)
    }

    /// Surge now at `place`: `NEW` orders waiting near it (plus `counting` not yet stored) against
    /// the available drivers there. 1 when surge is off or tracking cannot say.
    func surgeMultiplier(at place: Place, counting extra: Int) async -> Double {
        guard surge.isOn else { return 1 }
        let center = place.point
        let query = NearbyQuery(location: GeoJSONPoint(center), radius: surge.radius, limit: 100, availableOnly: true)
        do {
            async let drivers = platform.call(Ops.Tracking.nearby, query, timeout: .seconds(2)).devices.count
            let waiting = try await store.waitingOrders(near: center, radius: surge.radius) + extra
            return surge.multiplier(waitingOrders: waiting, availableDrivers: try await drivers)
        } catch {
            logger.warning("surge: demand or supply unknown; no surge", metadata: ["error": "\(error)"])
            return 1
        }
    }

    /// Applies `action` by the caller in one transaction, after the state machine says yes.
    func transition(
        _ action: OrderAction, _ params: OrderParams,
        _ change: @escaping @Sendable (inout Order, _ before: OrderStatus) -> Void = { _, _ in },
        sideEvents: @escaping @Sendable (Order, Order) -> [OrderSideEvent] = { _, _ in [] }
    ) async throws -> Order {
        let caller = params.caller
        do {
            let (order, previous) = try await store.change(id: params.id, sideEvents: sideEvents) { order in
                // A retried request whose first attempt was applied: the order as it is, nothing written.
                if OrderStateMachine.isRepeat(action, of: order.facts, by: OrderActor(caller)) { return }
                let (before, next) = (order.status, try Self.decide(action, order, caller))
                order.status = next
                change(&order, before)
            }
            relay.notify()
            if order.status != previous, !order.status.isOpen { ended(order.status) }
            return order
        } catch OrderStoreFailure.unknownOrder {
            throw unknownOrder(params.id)
        }
    }

    // MARK: Helpers

    enum Check { case allowed, repeated }

    /// Whether `caller` may do `action` to `order` now, or did it already (a retried request); throws the refusal.
    func check(_ action: OrderAction, _ order: Order, _ caller: Caller) throws -> Check {
        if OrderStateMachine.isRepeat(action, of: order.facts, by: OrderActor(caller)) { return .repeated }
        _ = try Self.decide(action, order, caller)
        return .allowed
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
        let reply = try await platform.callRaw(Ops.Users.get, json: JSONCoding.encode(UserIDParams(id: id)))
        if reply.status == Status.notFound {
            throw ServiceError.unprocessable("unknown_user", "caller.id: no \(role.rawValue) with id \(id)")
        }
        if let error = reply.serviceError { throw error }
        let user = try JSONCoding.decode(User.self, from: reply.json)
        guard user.role == role else {
            throw ServiceError.forbidden("forbidden", "user \(id) is a \(user.role.rawValue), not a \(role.rawValue)")
        }
        return user
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

extension Order {
    /// What the state machine needs to know of this order.
    var facts: OrderFacts {
        OrderFacts(
            status: status, riderID: rider.id, driverID: driver?.id, offeredTo: Set(offeredTo), formerlyOffered: Set(offerHistory),
            declined: Set(declinedBy))
    }
}

extension OrderActor {
    init(_ caller: Caller) {
        self = caller.role == .rider ? .rider(id: caller.id) : .driver(id: caller.id)
    }
}
