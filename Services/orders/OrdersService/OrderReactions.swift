import Bus
import Foundation
import Geo
import Logging
import RideContract
import RideModels
import ServiceKit
import ServiceStorage
import Storage
import Synchronization
import Wire

/// What the orders service does when an order's status changes or a trip arrives — the sample's
/// Cloud Functions, without their defects: an event says only which order (and which trip) to look
/// at, never what is true of it. Every reaction reads the order from orders' own store and changes
/// it only from the status it expects (a replayed, late or forged event changes nothing); a charge
/// is made from the stored order alone; an arrival is believed once trips says the trip arrived
/// and is that order's leg on its driver's device. Trip creation carries an idempotency key (order
/// id + leg: a retry never makes a second trip), and a failed call is retried with backoff until it
/// succeeds or no longer applies.
struct OrderReactions: Sendable {
    enum Leg: String, Sendable { case pickup, dropoff }

    let store: any OrderStorage
    let platform: ServiceClient
    let relay: OutboxRelay
    let payments: PaymentCapture
    let logger: Logger
    /// The destination radius of both legs' trips, in metres.
    var arrivalRadius = 30.0

    /// The reaction to `order.status.<status>` of order `orderID` (all it takes from the event); the
    /// status change it made, if any.
    @discardableResult
    func react(to status: OrderStatus, orderID: String) async -> OrderTransition? {
        switch status {
        case .accepted: return await retryingTransition("pickup trip", orderID, { try await startLeg(.pickup, orderID: orderID) })
        case .startedRide: return await retryingTransition("dropoff trip", orderID, { try await startLeg(.dropoff, orderID: orderID) })
        // The pickup trip ends at the pickup, not when the ride starts: the dropoff leg then only
        // makes its trip (ending the pickup trip there as well doubled that reaction's time).
        case .reachedPickup: await retrying("the pickup trip's end", orderID) { try await endPickupTrip(orderID: orderID) }
        case .cancelled:
            await retrying("cancellation cleanup", orderID) { try await cleanUpCancelled(orderID: orderID) }
            await charge(orderID: orderID)
        case .new: await retrying("the cancelled driver's trip", orderID) { try await releaseTrip(orderID: orderID) }
        case .completed: await charge(orderID: orderID)
        default: break
        }
        return nil
    }

    /// Charges what the stored order owes (a fare, a cancellation's fee) until it is charged or
    /// recorded as failed; nothing when it owes nothing.
    func charge(orderID: String) async {
        // Counted, so a card provider's retries are bounded (PaymentCapture.maxCardAttempts).
        let attempts = Mutex(0)
        await retrying("payment", orderID) {
            let attempt = attempts.withLock { count in
                count += 1
                return count
            }
            if try await payments.capture(orderID: orderID, attempt: attempt) != nil { relay.notify() }
        }
    }

    /// The reaction to `trip.destination_arrival` of trip `tripID` (all it takes from the event): the
    /// trip as trips has it says which order and leg; the status change it made, if any.
    @discardableResult
    func react(toArrivalOf tripID: String) async -> OrderTransition? {
        await retryingTransition("arrival", "trip \(tripID)") {
            let trip = try await platform.call(Ops.Trips.get, TripIDParams(tripID: tripID))
            guard let (orderID, leg) = ArrivalCheck.orderAndLeg(of: trip) else { return nil }
            return try await arrived(leg, orderID: orderID, trip: trip)
        }
    }

    /// What a trip carries about its ride: the order and leg, and the driver as the share page
    /// shows them (name, car and photos; no phone number — a share link is public).
    static func tripMetadata(_ order: Order, leg: Leg) -> [String: JSONValue] {
        var driver: [String: JSONValue] = [:]
        if let name = order.driver?.name { driver["name"] = .string(name) }
        if let car = order.driver?.car {
            var shown: [String: JSONValue] = ["model": .string(car.model), "license_plate": .string(car.licensePlate)]
            shown["make"] = car.make.map(JSONValue.string)
            shown["color"] = car.color.map(JSONValue.string)
            shown["photo_url"] = car.photoURL.map(JSONValue.string)
            driver["car"] = .object(shown)
        }
        driver["photo_url"] = order.driver?.photoURL.map(JSONValue.string)
        return ["order_id": .string(order.id), "leg": .string(leg.rawValue), "driver": .object(driver)]
    }

    /// `ACCEPTED → PICKING_UP` or `STARTED_RIDE → DROPPING_OFF`: a trip for the driver's device to
    /// the leg's destination (completing the pickup trip at the same time). The change, if it made it.
    @discardableResult
    func startLeg(_ leg: Leg, orderID: String) async throws -> OrderTransition? {
        let (from, action): (OrderStatus, OrderAction) =
            leg == .pickup ? (.accepted, .pickupTripCreated) : (.startedRide, .dropoffTripCreated)
        guard let order = try await store.order(id: orderID), order.status == from, let deviceID = order.driver?.deviceID else {
            return nil
        }
        // The pickup trip is completed while the dropoff trip is made (two calls to trips at once,
        // not one after the other), and both before the status moves on: a failure of either
        // leaves the order at STARTED_RIDE for the retry, which repeats both (each is idempotent).
        async let previousCompleted: Void = completePreviousTrip(of: order)
        let place = leg == .pickup ? order.pickup : order.dropoff
        let params = CreateTripParams(
            deviceID: deviceID,
            destination: .init(geometry: GeoJSONPoint(place.point), radius: arrivalRadius, address: place.address),
            metadata: Self.tripMetadata(order, leg: leg), idempotencyKey: Self.tripKey(order, leg), shared: false)
        let trip = try await platform.call(Ops.Trips.create, params)
        try await previousCompleted
        let (updated, previous) = try await store.change(id: orderID) { order in
            guard order.status == from else { return }
            order.status = try OrdersOps.decide(action, order, by: .reactor)
            order.tripID = trip.tripID
        }
        if updated.status != previous { relay.notify() }
        // Cancelled while the trip was being made: that trip must end too.
        if updated.status == .cancelled, updated.tripID != trip.tripID { try await completeTrip(trip.tripID) }
        return OrderTransition(from: previous, to: updated.status)
    }

    /// At the pickup, the pickup trip ends (the trip's track stops where its destination was
    /// reached; a ride started meanwhile has ended it already — `complete` is idempotent).
    func endPickupTrip(orderID: String) async throws {
        guard let order = try await store.order(id: orderID), order.status == .reachedPickup, let tripID = order.tripID else { return }
        try await completeTrip(tripID)
    }

    /// Before a leg, the order's previous trip ends: the pickup trip before the dropoff leg, and
    /// before a pickup leg a trip left from a driver who cancelled (normally none).
    private func completePreviousTrip(of order: Order) async throws {
        if let previousTrip = order.tripID { try await completeTrip(previousTrip) }
    }

    /// A leg's trip is made once per round of the ride (`<order>/<leg>`, then `/<n>` after the
    /// n-th redispatch): a retry finds the same trip, the next driver gets a new one.
    static func tripKey(_ order: Order, _ leg: Leg) -> String {
        "\(order.id)/\(leg.rawValue)" + (order.redispatches.map { "/\($0)" } ?? "")
    }

    /// An order back at dispatch lets go of the trip of the driver who cancelled.
    func releaseTrip(orderID: String) async throws {
        guard let order = try await store.order(id: orderID), order.status == .new, let tripID = order.tripID else { return }
        try await completeTrip(tripID)
        let (updated, _) = try await store.change(id: orderID) { order in
            guard order.status == .new, order.tripID == tripID else { return }
            order.tripID = nil
        }
        if updated.tripID == nil { relay.notify() }
    }

    /// The arrival came before the order took its trip (the trip arrived within milliseconds of
    /// being created): retried until the order has moved on to the leg's status.
    struct ArrivalBeforeLeg: Error {}

    /// `PICKING_UP → REACHED_PICKUP` or `DROPPING_OFF → REACHED_DROPOFF`, for the order's current
    /// trip only, once `trip` (as trips has it) arrived on the order's driver's device. The change, if it made it.
    @discardableResult
    func arrived(_ leg: Leg, orderID: String, trip: Trip) async throws -> OrderTransition? {
        let (from, action): (OrderStatus, OrderAction) = leg == .pickup ? (.pickingUp, .arrivedAtPickup) : (.droppingOff, .arrivedAtDropoff)
        let before: OrderStatus = leg == .pickup ? .accepted : .startedRide
        guard let order = try await store.order(id: orderID), ArrivalCheck.matches(trip, order) else { return nil }
        if order.status == before { throw ArrivalBeforeLeg() }
        let (updated, previous) = try await store.change(id: orderID) { order in
            guard order.status == from, order.tripID == trip.tripID, ArrivalCheck.matches(trip, order) else { return }
            order.status = try OrdersOps.decide(action, order, by: .reactor)
            if order.status == .reachedPickup { order.reachedPickupAt = Date() }
        }
        if updated.status != previous { relay.notify() }
        return OrderTransition(from: previous, to: updated.status)
    }

    /// A cancelled order's trip is completed, and the order lets go of the trip. It keeps its
    /// driver: the ride stays in the driver's history and its chat readable to both parties.
    func cleanUpCancelled(orderID: String) async throws {
        guard let order = try await store.order(id: orderID), order.status == .cancelled else { return }
        if let tripID = order.tripID { try await completeTrip(tripID) }
        _ = try await store.change(id: orderID) { order in
            guard order.status == .cancelled else { return }
            order.tripID = nil
        }
    }

    @discardableResult
    func completeTrip(_ tripID: String) async throws -> Trip {
        try await platform.call(Ops.Trips.complete, TripIDParams(tripID: tripID))
    }

    /// Runs `reaction` until it succeeds (`retryingWithBackoff`); a 4xx is a bug or bad data
    /// (retrying would not change it): logged, not retried.
    func retrying(_ what: String, _ orderID: String, _ reaction: @Sendable () async throws -> Void) async {
        await retryingTransition(what, orderID) {
            try await reaction()
            return nil
        }
    }

    /// As `retrying`, for a reaction that says which status change it made: the change of
    /// the attempt that succeeded (nil: none, or no attempt succeeded).
    @discardableResult
    func retryingTransition(_ what: String, _ orderID: String, _ reaction: @Sendable () async throws -> OrderTransition?) async
        -> OrderTransition?
    {
        var logger = logger
        logger[metadataKey: "reaction"] = "\(what)"
        logger[metadataKey: "order_id"] = "\(orderID)"
        var moved: OrderTransition?
        await retryingWithBackoff(
            "reaction", logger: logger,
            isPermanent: { error in
                guard let error = error as? ServiceError else { return false }
                return (400..<500).contains(error.status)
            }, { moved = try await reaction() })
        return moved
    }
}
