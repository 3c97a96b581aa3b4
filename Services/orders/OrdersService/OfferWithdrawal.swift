import Bus
import Foundation
import Logging
import RideContract
import RideModels
import ServiceLifecycle

/// Offers go stale (issue 22, item 4): a driver who accepts a ride, or goes offline, can take no
/// other order, so the `NEW` orders offered to them drop them. They stay in `offer_history` (no
/// round asks them again as someone new) but not in `declined_by` (they did not say no: once free
/// again, a round that asks again the drivers who did not decline may reach them). An order left
/// offered to nobody goes at once to the nearest available driver not yet asked, as after a
/// decline; if there is none, the next dispatch round widens it (`DispatchRounds`).
enum OfferRules {
    /// Takes `driver` off the order's current offer and offers it to those of `next` it was never
    /// offered to and who did not decline it (a decline passes the order on this way).
    static func passOn(_ order: inout Order, from driver: String, to next: [String]) {
        order.offeredTo.removeAll { $0 == driver }
        let fresh = next.filter { $0 != driver && !order.offerHistory.contains($0) && !order.declinedBy.contains($0) }
        order.offeredTo += fresh
        order.offerHistory += fresh
    }

    /// Withdraws a `NEW` order's offer from `driver`; `next` takes it only when nobody is left on
    /// it. Changes nothing when the order is not `NEW` or not offered to them (a replay, a race).
    static func withdraw(_ driver: String, from order: inout Order, passingTo next: [String]) {
        guard order.status == .new, order.offeredTo.contains(driver) else { return }
        passOn(&order, from: driver, to: order.offeredTo == [driver] ? next : [])
    }

    /// `order.offer_withdrawn` for each driver a change took off a `NEW` order's offer.
    static func withdrawnEvents(_ reason: OfferWithdrawalReason, before: Order, after: Order) -> [OrderSideEvent] {
        guard before.status == .new, after.status == .new else { return [] }
        return before.offeredTo.filter { !after.offeredTo.contains($0) }.map { driver in
            OrderSideEvent(
                Events.orderOfferWithdrawn,
                data: OfferWithdrawn(orderID: after.id, driverID: driver, reason: reason, version: after.version))
        }
    }

    /// Whether a device's status means its driver can take no offer now: they went off duty. A
    /// phone merely silent (inactive: in a tunnel, the app in the background) keeps its offers,
    /// which expire with `--offer-timeout-s` if it stays so.
    static func isUnavailable(_ status: DeviceStatusEvent) -> Bool { !status.available }

    /// The driver behind a device: its `user_id` metadata, believed only when that user's account
    /// names this device (metadata comes from the phone; a device belongs to one account).
    static func driver(of device: DeviceInfo, account: (String) async throws -> User?) async throws -> String? {
        guard case .string(let userID)? = device.metadata["user_id"], !userID.isEmpty, userID.count <= 128 else { return nil }
        guard let user = try await account(userID), user.role == .driver, user.deviceID == device.deviceID else { return nil }
        return userID
    }
}

extension OrdersOps {
    /// Withdraws every offer of a `NEW` order to `driverID` but `kept`'s, each in its own
    /// transaction with its `order.offer_withdrawn` (and `order.offered` for whom it passed to).
    /// Returns how many orders it changed.
    @discardableResult
    func withdrawOffers(from driverID: String, reason: OfferWithdrawalReason, keeping kept: String? = nil) async throws -> Int {
        var changed = 0
        for order in try await store.orders(driverID: driverID, status: .new, limit: 100)
        where order.id != kept && order.offeredTo.contains(driverID) {
            let next =
                order.offeredTo == [driverID]
                ? await nearestDrivers(
                    to: order.pickup, radius: dispatch.radius(round: order.dispatchRound ?? 1), excluding: order.offerHistory + [driverID],
                    count: 1) : []
            let (after, _) = try await store.change(
                id: order.id,
                sideEvents: { before, after in
                    OfferRules.withdrawnEvents(reason, before: before, after: after) + Self.offeredEvents(before: before, after: after)
                }
            ) { order in OfferRules.withdraw(driverID, from: &order, passingTo: next) }
            if after.version != order.version { changed += 1 }
        }
        if changed > 0 { relay.notify() }
        return changed
    }

    /// After `order` was accepted: its driver's other offers are withdrawn — while it is still
    /// their open order (a late replay of an old acceptance withdraws nothing).
    func withdrawOtherOffers(acceptedOrder orderID: String) async throws {
        guard let order = try await store.order(id: orderID), order.status.hasDriver, let driver = order.driver?.id else { return }
        let count = try await withdrawOffers(from: driver, reason: .acceptedOther, keeping: order.id)
        if count > 0 {
            logger.info("offers withdrawn: the driver accepted another ride", metadata: ["driver_id": "\(driver)", "orders": "\(count)"])
        }
    }

    /// A device went off duty: its driver's offers are withdrawn — if it is still off duty now. Events reach the reactor late under load: a phone's "inactive" from before its
    /// first fix, handled after the booking that offered it a ride, must not take that offer away.
    func withdrawOffers(after status: DeviceStatusEvent) async throws {
        guard OfferRules.isUnavailable(status) else { return }
        let device = try await platform.call(Ops.Tracking.device, DeviceParams(deviceID: status.deviceID), timeout: .seconds(2))
        guard !device.available else { return }
        guard let driver = try await OfferRules.driver(of: device, account: { id in try await user(id, role: .driver) }) else { return }
        let count = try await withdrawOffers(from: driver, reason: .unavailable)
        if count > 0 {
            logger.info("offers withdrawn: the driver went offline", metadata: ["driver_id": "\(driver)", "orders": "\(count)"])
        }
    }
}

/// Follows every device's `device.status.<device_id>` (a device's status changes seldom: when the
/// driver goes on or off duty or the phone stops reporting, not with each location) and withdraws
/// the offers of drivers who went offline. Best effort: an event the bus lost, or a failed
/// lookup, leaves the offer to expire with `--offer-timeout-s` as before.
struct DeviceStatusWatcher: Service {
    let ops: OrdersOps
    let subscriber: EventSubscriber<DeviceStatusEvent>
    let logger: Logger

    func run() async throws {
        await subscriber.eachEvent { received in
            do {
                try await ops.withdrawOffers(after: received.event.data)
            } catch {
                logger.warning(
                    "cannot withdraw the offers of a device gone offline; they expire instead",
                    metadata: ["device_id": "\(received.event.data.deviceID)", "error": "\(error)"])
            }
        }
    }
}
