import Bus
import RideModels
import Wire

/// The data of an event of the ride's lifecycle, decoded once from the bus by its CloudEvents
/// type: an order's status change (`order.status`), a trip's arrival (`trip.destination_arrival`),
/// or any other event of `orders` or `trips`, skipped. The orders reactor, the simulator and the
/// lifecycle benchmark follow these.
public enum LifecycleEvent: EventTypeDispatched, Equatable {
    case order(OrderStatusChanged)
    case arrival(TripEvent)
    /// Any other event of `orders` or `trips` (chat, ratings, offers, payments, other trip events).
    case other

    public init(type: String, from decoder: any Decoder) throws {
        switch type {
        case Events.orderStatus.type: self = .order(try OrderStatusChanged(from: decoder))
        case Events.tripDestinationArrival.type: self = .arrival(try TripEvent(from: decoder))
        default: self = .other
        }
    }

    /// A status change — the common event — and an arrival are read in one pass; anything else is skipped.
    public static func read(type: String, from reader: inout JSONFastReader) -> LifecycleEvent? {
        switch type {
        case Events.orderStatus.type: OrderStatusChanged.read(from: &reader).map(LifecycleEvent.order)
        case Events.tripDestinationArrival.type: TripEvent.read(from: &reader).map(LifecycleEvent.arrival)
        default: reader.skipValue() ? .other : nil
        }
    }
}
