import Bus
import Foundation
import RideContract
import RideModels
import Testing
import Wire

@testable import OrdersService

/// Offers go stale (issue 22, item 4): the pure rules of withdrawing an offer from a driver who
/// accepted another ride or went offline, and of telling the drivers each widening newly asks.
@Suite struct OfferWithdrawalTests {
    static let time = Date(timeIntervalSince1970: 1_790_000_000)
    static let rider = User(id: "r1", role: .rider, name: "Ann", phoneNumber: "+380501234567", createdAt: time)

    static func offered(to drivers: [String], history: [String] = [], declined: [String] = []) -> Order {
        var order = Order(
            id: "o1", status: .new, rider: rider, pickup: Place(latitude: 47, longitude: 35),
            dropoff: Place(latitude: 47.01, longitude: 35),
            createdAt: time, updatedAt: time)
        order.offeredTo = drivers
        order.offerHistory = history.isEmpty ? drivers : history
        order.declinedBy = declined
        order.version = 3
        return order
    }

    static func changed(_ before: Order, _ body: (inout Order) -> Void) -> Order {
        var after = before
        body(&after)
        if after != before { after.version += 1 }
        return after
    }

    static func withdrawals(_ events: [OrderSideEvent]) -> [OfferWithdrawn] { events.compactMap { $0.data as? OfferWithdrawn } }

    @Test func aWithdrawnDriverLeavesTheOfferButStaysInItsHistoryAndIsNotCountedAsDeclining() {
        let before = Self.offered(to: ["d1", "d2"])
        let after = Self.changed(before) { OfferRules.withdraw("d1", from: &$0, passingTo: ["d9"]) }
        #expect(after.offeredTo == ["d2"], "d2 is still on it, so nobody new is asked")
        #expect(after.offerHistory == ["d1", "d2"] && after.declinedBy.isEmpty)
        let events = OfferRules.withdrawnEvents(.acceptedOther, before: before, after: after)
        #expect(Self.withdrawals(events) == [OfferWithdrawn(orderID: "o1", driverID: "d1", reason: .acceptedOther, version: 4)])
        #expect(events.allSatisfy { (try? $0.topic()) == "order.offer_withdrawn" && $0.kind.type == Events.orderOfferWithdrawn.type })
    }

    @Test func anOrderLeftOfferedToNobodyGoesToTheNextDriverNotYetAskedAndNotDeclined() {
        let before = Self.offered(to: ["d1"], history: ["d0", "d1"], declined: ["d0"])
        let after = Self.changed(before) { OfferRules.withdraw("d1", from: &$0, passingTo: ["d0", "d1", "d2"]) }
        #expect(after.offeredTo == ["d2"] && after.offerHistory == ["d0", "d1", "d2"])
        let offered = OrdersOps.offeredEvents(before: before, after: after).compactMap { $0.data as? OrderOffered }
        #expect(offered.map(\.drivers) == [["d2"]], "the next driver hears of it")
        #expect(Self.withdrawals(OfferRules.withdrawnEvents(.unavailable, before: before, after: after)).map(\.driverID) == ["d1"])
        // Nobody to pass it to: offered to no one, for the next dispatch round to widen.
        let alone = Self.changed(before) { OfferRules.withdraw("d1", from: &$0, passingTo: []) }
        #expect(alone.offeredTo.isEmpty && alone.status == .new)
    }

    @Test func aWithdrawalChangesNothingWhenTheOfferIsGoneOrTheOrderMovedOn() {
        let notOffered = Self.offered(to: ["d2"], history: ["d1", "d2"])
        #expect(Self.changed(notOffered) { OfferRules.withdraw("d1", from: &$0, passingTo: ["d3"]) } == notOffered, "a replay")
        var accepted = Self.offered(to: ["d1"])
        accepted.status = .accepted
        #expect(Self.changed(accepted) { OfferRules.withdraw("d1", from: &$0, passingTo: ["d3"]) } == accepted)
        #expect(
            OfferRules.withdrawnEvents(.unavailable, before: Self.offered(to: ["d1"]), after: accepted).isEmpty,
            "an accept is not a withdrawal")
        #expect(OfferRules.withdrawnEvents(.unavailable, before: notOffered, after: notOffered).isEmpty)
    }

    @Test func aDeclinePassesTheOfferOnThroughTheSameRule() {
        var order = Self.offered(to: ["d1", "d2"])
        order.declinedBy.append("d1")
        OfferRules.passOn(&order, from: "d1", to: ["d1", "d2", "d3"])
        #expect(order.offeredTo == ["d2", "d3"] && order.offerHistory == ["d1", "d2", "d3"])
    }

    /// Each widening of the offer (a dispatch round) tells the drivers it newly asks, not only the
    /// first round's: `order.offered` names exactly them, with the round.
    @Test func eachWideningNotifiesTheDriversNewlyOffered() {
        let first = Self.offered(to: ["d1", "d2"])
        var second = first
        second.offeredTo = ["d3", "d4"]
        second.offerHistory += ["d3", "d4"]
        second.dispatchRound = 2
        let events = OrdersOps.offeredEvents(before: first, after: second).compactMap { $0.data as? OrderOffered }
        #expect(events == [OrderOffered(orderID: "o1", drivers: ["d3", "d4"], pickup: first.pickup, round: 2)])
        // Asked again in a later round (every driver near had been asked): named again.
        var third = second
        third.offeredTo = ["d1"]
        third.dispatchRound = 3
        #expect(OrdersOps.offeredEvents(before: second, after: third).compactMap { ($0.data as? OrderOffered)?.drivers } == [["d1"]])
        #expect(OrdersOps.offeredEvents(before: second, after: second).isEmpty, "the same drivers: nothing new")
    }

    /// Off duty loses offers; a phone only silent for a while keeps them (they expire with the offer timeout).
    @Test func onlyOffDutyDevicesLoseTheirOffers() {
        #expect(OfferRules.isUnavailable(DeviceStatusEvent(deviceID: "p", value: .active, available: false)))
        #expect(OfferRules.isUnavailable(DeviceStatusEvent(deviceID: "p", value: .inactive, available: false)))
        #expect(!OfferRules.isUnavailable(DeviceStatusEvent(deviceID: "p", value: .inactive, available: true)))
        #expect(!OfferRules.isUnavailable(DeviceStatusEvent(deviceID: "p", value: .active, available: true)))
    }

    /// A device's `user_id` comes from the phone: believed only when that driver's account names the device.
    @Test func theDriverOfADeviceIsTheAccountThatNamesIt() async throws {
        let dan = User(id: "d1", role: .driver, name: "Dan", phoneNumber: "+1", deviceID: "dan-phone", createdAt: Self.time)
        let accounts: [String: User] = ["d1": dan, "r1": Self.rider]
        func device(_ id: String, _ metadata: [String: JSONValue]) -> DeviceInfo {
            DeviceInfo(
                deviceID: id, name: nil, metadata: metadata, available: false, tracking: false, status: .active, lastSeen: nil,
                location: nil)
        }
        let lookup: (String) async throws -> User? = { accounts[$0] }
        #expect(try await OfferRules.driver(of: device("dan-phone", ["user_id": "d1"]), account: lookup) == "d1")
        #expect(try await OfferRules.driver(of: device("eve-phone", ["user_id": "d1"]), account: lookup) == nil, "not Dan's phone")
        #expect(try await OfferRules.driver(of: device("dan-phone", ["user_id": "r1"]), account: lookup) == nil, "a rider")
        for metadata: [String: JSONValue] in [
            [:], ["user_id": 7], ["user_id": ""], ["user_id": .string(String(repeating: "x", count: 500))], ["user_id": "nobody"],
        ] {
            #expect(try await OfferRules.driver(of: device("dan-phone", metadata), account: lookup) == nil, "\(metadata)")
        }
    }
}
