import Foundation
import Geo
import RideModels
import Wire

/// `/v1/shares/<share id>`: a trip's page (HyperTrack's per-trip link), the trip as trips has it.
@WireModel
struct SharedTrip: Codable, Sendable {
    var trip: Trip
    var driver: JSONValue?
    var shareURL: String
    /// The driver's latest position, while the trip is active.
    var location: LatestLocation?
}

/// `/v1/ride-shares/<share id>`: what a ride's page draws and says, and nothing more — no ids of
/// people, devices, orders or trips, no phone numbers, no metadata. `trip` has the shape a trip's
/// page reads (so one page draws both), cut to the map and the times.
@WireModel
struct RideShareView: Codable, Sendable {
    /// Where the ride stands.
    @WireModel
    struct Ride: Codable, Sendable {
        var status: OrderStatus
        var pickup: Place
        var dropoff: Place
        var driver: SharedDriver?
        var summary: SharedSummary?
        var fare: Fare?
        var updatedAt: Date
        /// When the link stops working; absent while the ride goes on.
        var expiresAt: Date?

        init(_ ride: SharedRide) {
            (status, pickup, dropoff, driver, summary, fare, updatedAt, expiresAt) = (
                ride.status, ride.pickup, ride.dropoff, ride.driver, ride.summary, ride.fare, ride.updatedAt, ride.expiresAt
            )
        }
    }

    /// The leg driven now, or once the ride is over the whole ride's route: the destination, the
    /// route planned ahead and the time of arrival, or the route driven.
    @WireModel
    struct Leg: Codable, Sendable {
        var leg: RideLeg
        var status: Trip.Status
        var destination: Trip.Destination
        var estimate: Trip.Estimate?
        var summary: SharedSummary?

        /// A leg being driven, from its trip.
        init(_ leg: RideLeg, trip: Trip) {
            self.leg = leg
            status = trip.status
            destination = trip.destination
            estimate = trip.estimate
            summary = trip.summary.map(SharedSummary.init)
        }

        /// A finished ride: its route driven, ending at the drop-off.
        init(finished ride: SharedRide, summary: SharedSummary) {
            leg = .dropoff
            status = .completed
            destination = Trip.Destination(
                geometry: GeoJSONPoint(ride.dropoff.point), radius: 0, address: ride.dropoff.address)
            estimate = nil
            self.summary = summary
        }
    }

    /// The driver's position: where and when, nothing of the device.
    @WireModel
    struct Position: Codable, Sendable {
        var geometry: GeoJSONPoint
        var bearing: Double?
        var recordedAt: Date

        init(_ location: LatestLocation) {
            geometry = location.geometry
            bearing = location.bearing
            recordedAt = location.recordedAt
        }
    }

    var ride: Ride
    var shareURL: String
    var trip: Leg?
    var driver: SharedDriver?
    var location: Position?
}
