import Foundation

/// What each party of an order may see of the other, by role and status: the order's rider and
/// driver only what their part of the ride needs, now.
///
/// | who | sees of the other |
/// |---|---|
/// | the rider | the driver's name, car, photo, rating; phone and device while the ride goes on; never the driver's cancellations |
/// | the assigned driver | the rider's name, photo, rating; phone while the ride goes on; never a device |
/// | a driver it is offered to | the rider's name, photo, rating; the pickup and drop-off to about 100 m, without addresses |
///
/// The orders service answers every caller through `shown(_:to:)`; the gateway holds the orders of
/// live updates to it as well. Events on the bus carry the whole order (services and operators).
public enum OrderPrivacy {
    /// `order` as `caller` may see it.
    public static func shown(_ order: Order, to caller: Caller) -> Order {
        var order = order
        let rideGoesOn = order.status.isOpen
        switch caller.role {
        case .rider:
            guard caller.id == order.rider.id, var driver = order.driver else { break }
            driver.cancellations = nil
            if !rideGoesOn {
                driver.phoneNumber = ""
                driver.deviceID = nil
            }
            order.driver = driver
        case .driver where order.driver?.id == caller.id:
            order.rider = person(order.rider, phone: rideGoesOn)
        case .driver:
            order.rider = person(order.rider, phone: false)
            order.pickup = approximate(order.pickup)
            order.dropoff = approximate(order.dropoff)
        }
        return order
    }

    /// The orders of a list, each as `caller` may see it.
    public static func shown(_ orders: [Order], to caller: Caller) -> [Order] { orders.map { shown($0, to: caller) } }

    /// Someone as the other party sees them: no device, no record of cancels; the phone number
    /// only when `phone` (else empty).
    static func person(_ user: User, phone: Bool) -> User {
        var user = user
        if !phone { user.phoneNumber = "" }
        user.deviceID = nil
        user.cancellations = nil
        return user
    }

    /// A place to about 100 m (three decimals of a degree), without its address.
    static func approximate(_ place: Place) -> Place {
        Place(latitude: (place.latitude * 1000).rounded() / 1000, longitude: (place.longitude * 1000).rounded() / 1000)
    }
}
