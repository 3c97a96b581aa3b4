import Bus
import Foundation
import Geo
import RideContract
import RideModels

/// Dispatch: offering an order to the nearest free drivers, round after round, expiring it, and
/// sending it back to dispatch when its driver cancels before the ride.
extension OrdersOps {
    /// Ends `order`, still `NEW` and as read (`version`), with reason `no_driver_found`; whether it did.
    func expire(_ order: Order, now: Date) async throws -> Bool {
        let version = order.version
        let (after, _) = try await store.change(id: order.id, now: now, sideEvents: { _, _ in [] }) { order in
            guard order.status == .new, order.version == version else { return }
            order.status = .cancelled
            order.cancelReason = Order.noDriverFound
            order.cancelledAt = now
            order.offeredTo = []
        }
        relay.notify()
        let expired = after.version != version && after.cancelReason == Order.noDriverFound
        if expired { ended(.cancelled) }
        return expired
    }

    /// The statuses in which a driver's cancel sends the order back to dispatch (before the ride
    /// starts); from `STARTED_RIDE` on it ends the ride.
    static let redispatchedOnDriverCancel: Set<OrderStatus> = [.accepted, .pickingUp, .reachedPickup]

    /// A driver who accepted cancels before the ride: the order is `NEW` again, offered to the
    /// nearest available drivers but never again to this one (`declined_by`); the search for a
    /// driver starts over; the rider is told another driver is being found.
    func redispatchAfterDriverCancel(_ current: Order, _ params: OrderParams) async throws -> Order {
        let driverID = params.caller.id
        let drivers = await nearestDrivers(
            to: current.pickup, radius: dispatch.radius(round: 1), excluding: current.declinedBy + [driverID])
        let now = Date()
        let (order, _) = try await store.change(id: current.id, now: now, sideEvents: Self.driverCancelledEvents) { order in
            // Checked again in the transaction: a racing change (the rider cancelled) wins.
            guard order.driver?.id == driverID, Self.redispatchedOnDriverCancel.contains(order.status) else { return }
            order.status = .new
            order.driver = nil
            order.declinedBy.append(driverID)
            order.offeredTo = drivers.filter { !order.declinedBy.contains($0) }
            order.offerHistory += order.offeredTo.filter { !order.offerHistory.contains($0) }
            order.dispatchRound = 1
            order.offeredAt = now
            order.searchingSince = now
            order.redispatches = (order.redispatches ?? 0) + 1
        }
        relay.notify()
        return order
    }

    /// The rider's cancel ends the order; the driver's before the ride sends it back to dispatch.
    func cancel(_ params: OrderParams) async throws -> Order {
        if params.caller.role == .driver {
            let current = try await existing(params.id)
            if current.driver?.id == params.caller.id, Self.redispatchedOnDriverCancel.contains(current.status) {
                return try await redispatchAfterDriverCancel(current, params)
            }
        }
        return try await transition(.cancel, params) { order, before in
            // The driver came to the pickup for nothing: the rider pays the fee, the driver most of it.
            if params.caller.role == .rider, before == .reachedPickup, fares.cancellationFeeCents > 0 {
                order.cancellationFee = Fee(currency: fares.currency, amountCents: fares.cancellationFeeCents)
            }
            order.cancelReason = params.reason
            order.cancelledBy = params.caller
            order.cancelledAt = Date()
            order.offeredTo = []
        }
    }

    /// `order.driver_cancelled` when a change sent the order back to dispatch after its driver's cancel.
    @Sendable static func driverCancelledEvents(before: Order, after: Order) -> [OrderSideEvent] {
        guard let driver = before.driver, let count = after.redispatches, count > (before.redispatches ?? 0) else { return [] }
        return [
            OrderSideEvent(
                Events.orderDriverCancelled,
                data: DriverCancelled(
                    orderID: after.id, driverID: driver.id, deviceID: driver.deviceID, redispatch: count, cancelledAt: after.updatedAt))
        ]
    }

    /// A dispatch round for a `NEW` order whose offers expired or were all declined: the nearest
    /// available drivers not yet asked, one radius step farther. Conditional on the version read,
    /// so a racing accept wins.
    func redispatch(_ order: Order, now: Date) async throws {
        let round = (order.dispatchRound ?? 1) + 1
        let radius = dispatch.radius(round: round)
        let notYetAsked = await nearestDrivers(to: order.pickup, radius: radius, excluding: order.offerHistory)
        // Every available driver near has been asked: ask again the nearest who did not decline.
        // A driver busy (or away from the phone) at their offer may be free now; without this an
        // order in a town of three drivers would wait forever once each had let one offer expire.
        let drivers =
            notYetAsked.isEmpty && !order.offerHistory.isEmpty
            ? await nearestDrivers(to: order.pickup, radius: radius, excluding: order.declinedBy) : notYetAsked
        let version = order.version
        _ = try await store.change(id: order.id, now: now, sideEvents: Self.offeredEvents) { order in
            guard order.status == .new, order.version == version else { return }
            order.offeredTo = drivers
            order.offerHistory += drivers.filter { !order.offerHistory.contains($0) }
            order.dispatchRound = round
            order.offeredAt = now
        }
        relay.notify()
    }

    /// The nearest available drivers (their devices' `user_id` metadata) without an open order,
    /// nearest first: a driver whose app still says available while on a ride cannot accept
    /// another, so is not offered one. Tracking being away leaves the order unoffered rather than
    /// failing the booking.
    func nearestDrivers(to place: Place, radius: Double, excluding declined: [String], count: Int? = nil) async -> [String] {
        let count = count ?? dispatch.drivers
        let query = NearbyQuery(
            location: GeoJSONPoint(place.point),
            radius: radius, limit: max(10, (count + declined.count) * 2), availableOnly: true)
        let result: NearbyResult
        do {
            result = try await platform.call(Ops.Tracking.nearby, query, timeout: .seconds(2))
        } catch {
            logger.warning("dispatch: tracking.nearby failed; the order waits unoffered", metadata: ["error": "\(error)"])
            return []
        }
        var candidates: [String] = []
        for device in result.devices {
            guard case .string(let userID)? = device.metadata["user_id"], !declined.contains(userID), !candidates.contains(userID) else {
                continue
            }
            candidates.append(userID)
        }
        let busy: Set<String>
        do {
            busy = try await store.driversWithOpenOrders(among: candidates)
        } catch {
            // Offered anyway: a busy driver's accept is refused (driver_busy), so this only costs an offer.
            logger.warning("dispatch: cannot read which drivers are on a ride; offering without that", metadata: ["error": "\(error)"])
            busy = []
        }
        return Array(candidates.lazy.filter { !busy.contains($0) }.prefix(count))
    }
}
