import RideModels
import Wire

/// What an arrival must show before an order moves, read from trips' own record of the trip (never
/// from the event): the order and leg orders made the trip for (its metadata), that it arrived, and
/// that it is on the device of the order's driver.
enum ArrivalCheck {
    /// The order and leg `trip` was made for.
    static func orderAndLeg(of trip: Trip) -> (orderID: String, leg: OrderReactions.Leg)? {
        guard case .string(let orderID)? = trip.metadata?["order_id"], case .string(let legName)? = trip.metadata?["leg"],
            let leg = OrderReactions.Leg(rawValue: legName)
        else { return nil }
        return (orderID, leg)
    }

    /// Whether `trip` arrived, was made for `order`, and is on its driver's device.
    static func matches(_ trip: Trip, _ order: Order) -> Bool {
        trip.destination.arrivedAt != nil && orderAndLeg(of: trip)?.orderID == order.id && order.driver?.deviceID == trip.deviceID
    }
}
