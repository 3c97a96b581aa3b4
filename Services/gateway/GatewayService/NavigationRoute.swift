import Bus
import Foundation
import Hummingbird
import RideContract
import RideModels
import Wire

/// `GET /v1/orders/{id}/route`: the way the ride's current trip takes from where the car is —
/// its line and, turn by turn, the streets and manoeuvres left (the driver's navigation; the same
/// estimate reaches both parties' live sockets as `eta`).
extension AppRoutes {
    func registerNavigation(_ routes: RecordedRoutes) {
        routes.on(
            .get, "orders/{id}/route",
            RouteDoc(
                "The way left on the ride's current trip, turn by turn (the driver's navigation)", tag: .rides,
                path: ["id": "the order's id"],
                reply: RideRoute.self, "the trip's destination and estimate: route.polyline and route.steps", errors: [403, 409],
                op: "\(Ops.Orders.get.fullName), \(Ops.Trips.get.fullName)")
        ) { _, context in
            let order = try await platform.call(Ops.Orders.get, try context.orderParams())
            guard order.status.hasDriver, let tripID = order.tripID else {
                throw GatewayError(
                    .conflict, "no_trip",
                    "order \(order.id) is \(order.status.rawValue): a route comes with the trip to the pickup or the drop-off")
            }
            let trip = try await platform.call(Ops.Trips.get, TripIDParams(tripID: tripID))
            return try JSONBody.response(
                RideRoute(orderID: order.id, tripID: trip.tripID, destination: trip.destination, estimate: trip.estimate))
        }
    }
}

/// `GET /v1/orders/{id}/route`.
@WireModel
struct RideRoute: Codable, Sendable, Equatable {
    var orderID: String
    var tripID: String
    var destination: Trip.Destination
    /// Absent until the trip has an estimate (the car's first position), and once arrived.
    var estimate: Trip.Estimate?
}
