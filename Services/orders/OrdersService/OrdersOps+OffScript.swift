import Bus
import Foundation
import Geo
import RideContract
import RideModels

/// Rides that leave the script: a geofence that never fires (the driver reports arriving) and a
/// rider who never comes (the driver ends the ride as a no-show). `OffScriptRules` says when.
extension OrdersOps {
    /// `PICKING_UP → REACHED_PICKUP` or `DROPPING_OFF → REACHED_DROPOFF` on the driver's word, from
    /// near the place: their phone's last position, as tracking has it (never the request's).
    /// Marked in `arrivals_reported` and logged; the reactions that follow are the geofence's.
    func arrive(_ params: OrderParams) async throws -> Order {
        let current = try await existing(params.id)
        guard params.caller.role == .driver, current.driver?.id == params.caller.id else {
            throw forbidden("only the order's driver may report arriving")
        }
        let (action, leg, place): (OrderAction, String, Place)
        switch current.status {
        case .pickingUp, .reachedPickup: (action, leg, place) = (.arrivedAtPickup, "pickup", current.pickup)
        case .droppingOff, .reachedDropoff: (action, leg, place) = (.arrivedAtDropoff, "dropoff", current.dropoff)
        default:
            throw ServiceError.conflict(
                "illegal_transition",
                "the order is \(current.status.rawValue): a driver reports arriving on the way to the pickup (PICKING_UP) or the drop-off (DROPPING_OFF)"
            )
        }
        if OrderStateMachine.isRepeat(action, of: current.facts, by: OrderActor(params.caller)) { return current }
        if let problem = offScript.arrivalProblem(at: try await driverPosition(current), place: place, leg: leg) {
            throw ServiceError.conflict("too_far", problem)
        }
        let order = try await transition(action, params) { order, _ in
            if order.status == .reachedPickup { order.reachedPickupAt = Date() }
            order.arrivalsReported = (order.arrivalsReported ?? []) + [leg]
        }
        logger.info(
            "arrival reported by the driver", metadata: ["order_id": "\(order.id)", "leg": "\(leg)", "driver_id": "\(params.caller.id)"])
        return order
    }

    /// `REACHED_PICKUP → CANCELLED` (reason `no_show`) by the order's driver, once the rider has had
    /// the wait to come; the rider pays the cancellation fee (the driver earns their share).
    func noShow(_ params: OrderParams) async throws -> Order {
        let current = try await existing(params.id)
        guard params.caller.role == .driver, current.driver?.id == params.caller.id else {
            throw forbidden("only the order's driver may end it as a no-show")
        }
        // a retry
        if current.status == .cancelled, current.cancelReason == Order.noShow, current.cancelledBy == params.caller { return current }
        guard current.status == .reachedPickup else {
            throw ServiceError.conflict(
                "illegal_transition",
                "the order is \(current.status.rawValue): a no-show is called while the driver waits at the pickup (REACHED_PICKUP)")
        }
        if let problem = offScript.noShowProblem(reachedAt: current.reachedPickupAt ?? current.updatedAt, now: Date()) {
            throw ServiceError.conflict("too_early", problem)
        }
        let order = try await transition(.noShow, params) { order, _ in
            if fares.cancellationFeeCents > 0 {
                order.cancellationFee = Fee(currency: fares.currency, amountCents: fares.cancellationFeeCents)
            }
            order.cancelReason = Order.noShow
            order.cancelledBy = params.caller
            order.cancelledAt = Date()
            order.offeredTo = []
        }
        logger.info("no-show", metadata: ["order_id": "\(order.id)", "driver_id": "\(params.caller.id)"])
        return order
    }

    /// The order's driver's phone's last position, as tracking has it; nil when it has none.
    func driverPosition(_ order: Order) async throws -> GeoPoint? {
        guard let deviceID = order.driver?.deviceID else { return nil }
        return try await platform.call(Ops.Tracking.device, DeviceParams(deviceID: deviceID), timeout: .seconds(2)).location?.geometry.point
    }
}
