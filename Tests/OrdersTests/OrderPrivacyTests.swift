import Foundation
import RideModels
import Testing

/// Each party sees of the other only what its part of the ride needs, now (`OrderPrivacy`).
@Suite struct OrderPrivacyTests {
    static let joined = Date(timeIntervalSince1970: 1_790_000_000)
    static let rider = User(id: "u-ann", role: .rider, name: "Ann", phoneNumber: "+380501110001", createdAt: joined)
    static let driver: User = {
        var dan = User(id: "u-dan", role: .driver, name: "Dan", phoneNumber: "+380671110001", deviceID: "dan-phone", createdAt: joined)
        dan.cancellations = 2
        return dan
    }()
    static func order(_ status: OrderStatus, driver: User? = Self.driver) -> Order {
        var order = Order(
            id: "o-1", status: status, rider: rider, pickup: Place(latitude: 60.169_87, longitude: 24.938_37, address: "Home St 1"),
            dropoff: Place(latitude: 60.171_2, longitude: 24.941_4, address: "Work Ave 2"), createdAt: Date(), updatedAt: Date(),
            driver: driver)
        order.offeredTo = status == .new ? ["u-eve"] : []
        return order
    }
    static let ann = Caller(role: .rider, id: "u-ann")
    static let dan = Caller(role: .driver, id: "u-dan")
    static let eve = Caller(role: .driver, id: "u-eve")

    @Test func aDriverOfferedTheOrderSeesNoPhoneNoAddressAndThePlacesToAHundredMetres() {
        let offered = OrderPrivacy.shown(Self.order(.new, driver: nil), to: Self.eve)
        #expect(offered.rider.phoneNumber.isEmpty && offered.rider.name == "Ann")
        #expect(offered.pickup.address == nil && offered.dropoff.address == nil)
        #expect(offered.pickup.latitude == 60.17 && offered.pickup.longitude == 24.938)
    }

    @Test func theAssignedDriverSeesTheRidersPhoneWhileTheRideGoesOnOnly() {
        #expect(OrderPrivacy.shown(Self.order(.pickingUp), to: Self.dan).rider.phoneNumber == "+380501110001")
        #expect(OrderPrivacy.shown(Self.order(.pickingUp), to: Self.dan).pickup.address == "Home St 1")
        #expect(OrderPrivacy.shown(Self.order(.completed), to: Self.dan).rider.phoneNumber.isEmpty)
        #expect(OrderPrivacy.shown(Self.order(.pickingUp), to: Self.dan).driver == Self.driver, "their own record whole")
    }

    @Test func theRiderSeesTheDriversPhoneAndDeviceWhileTheRideGoesOnAndNeverTheirCancels() {
        let during = OrderPrivacy.shown(Self.order(.droppingOff), to: Self.ann)
        #expect(
            during.driver?.phoneNumber == "+380671110001" && during.driver?.deviceID == "dan-phone" && during.driver?.cancellations == nil)
        let after = OrderPrivacy.shown(Self.order(.completed), to: Self.ann)
        #expect(after.driver?.phoneNumber == "" && after.driver?.deviceID == nil && after.driver?.name == "Dan")
        #expect(after.rider == Self.rider && after.pickup.address == "Home St 1", "their own order whole")
    }
}
