import Bus
import Foundation
import RideContract
import RideModels
import Wire

/// A ride's share link: made when the rider asks (the driver may not share the rider's ride), one
/// id for the whole ride, revoked when the rider says so, dead `shareLifetime` after the ride.
extension OrdersOps {
    func registerShares(on router: inout OpRouter) {
        router.on(Ops.Orders.share) { (params: OrderParams, _) -> RideShare in try await share(params) }
        router.on(Ops.Orders.revokeShare) { (params: OrderParams, _) -> Order in
            OrderPrivacy.shown(try await revokeShare(params), to: params.caller)
        }
        // The share id is the capability (as HyperTrack's share URLs): no caller.
        router.on(Ops.Orders.getByShare) { (params: ShareIDParams, _) -> SharedRide in try await sharedRide(params.shareID) }
    }

    /// The ride's share id for its rider: made on the first ask (a racing second ask keeps the
    /// first's), the same for the rest of the ride and after it, until revoked.
    func share(_ params: OrderParams) async throws -> RideShare {
        let current = try await ridersOwn(params, doing: "share")
        if let shareID = current.shareID { return RideShare(orderID: current.id, shareID: shareID) }
        let made = ShareID.make(length: ShareID.rideLength)
        let (order, _) = try await store.change(id: current.id) { order in
            if order.shareID == nil { order.shareID = made }
        }
        return RideShare(orderID: order.id, shareID: order.shareID ?? made)
    }

    /// Ends the ride's link at once: whoever holds it sees `unknown_share`; the rider's next ask
    /// makes a new one. Revoking a ride that is not shared changes nothing.
    func revokeShare(_ params: OrderParams) async throws -> Order {
        let current = try await ridersOwn(params, doing: "revoke the share of")
        guard current.shareID != nil else { return current }
        let (order, _) = try await store.change(id: current.id) { order in order.shareID = nil }
        return order
    }

    /// What the link shows, while it works: 404 `unknown_share` for an id no ride has (revoked
    /// ones included), 410 `share_expired` once the ride ended `shareLifetime` ago.
    func sharedRide(_ shareID: String) async throws -> SharedRide {
        guard ShareID.isValidRide(shareID), let order = try await store.order(shareID: shareID) else {
            throw ServiceError.notFound("unknown_share", "no ride is shared as \(shareID.prefix(20))")
        }
        let ride = SharedRide(order, lifetimeAfterRide: shareLifetime)
        if let expiresAt = ride.expiresAt, expiresAt <= Date() {
            throw ServiceError(
                status: Status.gone, code: "share_expired", message: "this ride ended and its link expired at \(RFC3339.format(expiresAt))")
        }
        return ride
    }

    /// The order, when `params.caller` is its rider; 403 for anyone else (its driver included).
    private func ridersOwn(_ params: OrderParams, doing what: String) async throws -> Order {
        let order = try await existing(params.id)
        guard params.caller.role == .rider, params.caller.id == order.rider.id else {
            throw forbidden("only the rider of order \(order.id) may \(what) it")
        }
        return order
    }
}
