import Bus
import Foundation
import Geo
import RideContract
import RideModels
import Roads

/// A rider who changes where they are going: before the driver reaches the drop-off, the order
/// takes the new one; on the ride, the dropoff trip heads there first (a new route and estimate
/// from the car), and the rider gets the fare quoted for the ride as it now goes. Both are told
/// (`order.destination_changed`).
extension OrdersOps {
    func changeDestination(_ params: ChangeDestinationParams) async throws -> Order {
        let current = try await existing(params.id)
        guard params.caller.role == .rider, current.rider.id == params.caller.id else {
            throw forbidden("only the order's rider may change its destination")
        }
        let (_, dropoff) = try await places(
            of: params.caller, pickup: current.pickup, pickupID: nil, dropoff: params.dropoff, dropoffID: params.dropoffPlaceID)
        if dropoff == current.dropoff { return current }  // a retry, or nothing to change
        try Self.checkDestinationChange(current.status)
        var position: GeoPoint?
        if current.status == .droppingOff, let tripID = current.tripID {
            let destination = CreateTripParams.Destination(geometry: GeoJSONPoint(dropoff.point), address: dropoff.address)
            _ = try await platform.call(Ops.Trips.changeDestination, ChangeTripDestinationParams(tripID: tripID, destination: destination))
            position = try? await driverPosition(current)
        }
        let quote = await fareQuote(current, to: dropoff, via: position)
        let previous = current.dropoff
        let (order, _) = try await store.change(
            id: params.id,
            sideEvents: { before, after in
                guard after.dropoff != before.dropoff else { return [] }
                let changed = DestinationChanged(order: after, previousDropoff: previous, fareQuote: quote)
                return [
                    OrderSideEvent(Events.orderDestinationChanged, data: changed)
                ]
            }
        ) { order in
            // What the trip was told must still hold: no step of the ride since (a start now makes the dropoff trip from this order).
            guard order.status == current.status else {
                throw ServiceError.conflict(
                    "changed_meanwhile", "the order went from \(current.status.rawValue) to \(order.status.rawValue) meanwhile; ask again")
            }
            order.dropoff = dropoff
            order.fareQuote = quote
        }
        relay.notify()
        logger.info("destination changed", metadata: ["order_id": "\(order.id)", "status": "\(order.status.rawValue)"])
        return order
    }

    /// Refuses a change in `status`: until the driver reaches the drop-off, except while the
    /// dropoff trip is being made (a moment after the ride starts).
    static func checkDestinationChange(_ status: OrderStatus) throws {
        switch status {
        case .new, .accepted, .pickingUp, .reachedPickup, .droppingOff: return
        case .startedRide:
            throw ServiceError.conflict(
                "not_now", "the ride is starting (STARTED_RIDE): its trip to the drop-off is being made; ask again in a moment")
        case .reachedDropoff, .completed, .cancelled:
            throw ServiceError.conflict(
                "illegal_transition", "the order is \(status.rawValue): the destination changes until the driver reaches the drop-off")
        }
    }

    /// The fare of the ride from its pickup — by `position` (the car, once riding) — to `dropoff`,
    /// at the ride's surge: each leg along the roads where there are roads.
    func fareQuote(_ order: Order, to dropoff: Place, via position: GeoPoint?) async -> FareEstimate {
        let stops = [order.pickup.point] + (position.map { [$0] } ?? []) + [dropoff.point]
        var legs: [Route] = []
        for (from, to) in zip(stops, stops.dropFirst()) { legs.append(await route(from: from, to: to)) }
        return fareEstimate(along: legs, surge: order.surge ?? 1, pickup: order.pickup, dropoff: dropoff)
    }

    /// The fare of driving `legs` in turn at `surge`: along the roads' line when every leg has roads.
    func fareEstimate(along legs: [Route], surge: Double, pickup: Place, dropoff: Place) -> FareEstimate {
        let (metres, seconds) = (Int(legs.map(\.distance).reduce(0, +).rounded()), Int(legs.map(\.duration).reduce(0, +).rounded()))
        let onRoads = legs.allSatisfy { $0.kind == .road }
        return FareEstimate(
            currency: fares.currency, totalCents: fares.fareCents(metres: Double(metres), seconds: Double(seconds), surge: surge),
            distanceMetres: metres, durationSeconds: seconds, surge: surge, pickup: pickup, dropoff: dropoff,
            estimateKind: (onRoads ? RouteKind.road : RouteKind.straightLine).rawValue,
            route: onRoads ? TripSummary.LineString(coordinates: legs.flatMap(\.line.geoJSONCoordinates)) : nil)
    }

    /// A route along the roads, or the straight-line estimate when there is none.
    func route(from: GeoPoint, to: GeoPoint) async -> Route {
        do {
            return try await roads.route(from: from, to: to)
        } catch {
            logger.warning("no route for a quote; the straight-line estimate instead", metadata: ["error": "\(error)"])
            return StraightLineRoutes(model: routes).line(from: from, to: to)
        }
    }
}
