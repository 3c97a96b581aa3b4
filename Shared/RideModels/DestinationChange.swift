import Foundation
import Geo
import Wire

/// `orders.change_destination`: the rider's new drop-off, given as a `Place` or as one of their
/// saved places (`users.save_place`).
@WireModel
public struct ChangeDestinationParams: Codable, Sendable, Equatable {
    public var caller: Caller
    public var id: String
    public var dropoff: Place?
    public var dropoffPlaceID: String?

    public init(caller: Caller, id: String, dropoff: Place? = nil, dropoffPlaceID: String? = nil) {
        self.caller = caller
        self.id = id
        self.dropoff = dropoff
        self.dropoffPlaceID = dropoffPlaceID
    }

    enum CodingKeys: String, CodingKey {
        case caller, id, dropoff
        case dropoffPlaceID = "dropoff_place_id"
    }
}

/// `order.destination_changed`: the order with its new drop-off, the one before, and the fare
/// quoted for the ride as it now goes.
@WireModel
public struct DestinationChanged: Codable, Sendable, Equatable {
    public var order: Order
    public var previousDropoff: Place
    public var fareQuote: FareEstimate

    public init(order: Order, previousDropoff: Place, fareQuote: FareEstimate) {
        self.order = order
        self.previousDropoff = previousDropoff
        self.fareQuote = fareQuote
    }

    enum CodingKeys: String, CodingKey {
        case order
        case previousDropoff = "previous_dropoff"
        case fareQuote = "fare_quote"
    }
}

/// `trips.change_destination`: an active trip's new destination (the radius stays when absent).
@WireModel
public struct ChangeTripDestinationParams: Codable, Sendable, Equatable {
    public var tripID: String
    public var destination: CreateTripParams.Destination

    public init(tripID: String, destination: CreateTripParams.Destination) {
        self.tripID = tripID
        self.destination = destination
    }

    enum CodingKeys: String, CodingKey {
        case destination
        case tripID = "trip_id"
    }
}
