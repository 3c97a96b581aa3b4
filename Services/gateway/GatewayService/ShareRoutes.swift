import Bus
import Foundation
import Hummingbird
import RideContract
import RideModels
import Wire

/// Share links: `/<7-character share id>` is a page that shows the trip live and then its
/// summary; `/v1/shares/<share id>` is what the page reads every second. No token: the share id
/// is the capability (as HyperTrack's share URLs), and what it shows is what a rider would send a
/// friend — the trip, the driver's name and car, their position while the trip is active.
struct ShareRoutes {
    let platform: PlatformCalls
    let settings: GatewaySettings
    let limits: RateLimits

    func register(data: RecordedRoutes, pages: RecordedRoutes) {
        let shareID = ["share_id": "7 letters and digits, from the share link"]
        data.on(
            .get, "shares/{share_id}",
            RouteDoc(
                "What a share page shows: the trip, the driver's name and car, their position while active", tag: .shareLinks,
                path: shareID, reply: SharedTrip.self,
                "the shared trip", errors: [429],
                op: "\(Ops.Trips.getByShare.fullName), \(Ops.Tracking.device.fullName)")
        ) { request, context in
            try limits.admitShareRead(request, context)
            let shareID = try context.parameters.require("share_id")
            guard Self.isShareID(shareID) else { throw Self.unknown(shareID) }
            let trip = try await platform.call(Ops.Trips.getByShare, ShareIDParams(shareID: shareID))
            var view = SharedTrip(trip: trip, driver: trip.metadata?["driver"], shareURL: "\(settings.publicURL)/\(shareID)")
            view.location = await driverPosition(trip)
            return try JSONBody.response(view)
        }
        pages.on(
            .get, "{share_id}",
            RouteDoc(
                "The share page (HTML): the trip live, then its summary", tag: .shareLinks, path: shareID,
                replies: [.init(status: 200, description: "an HTML page", content: .html)], callsServices: false)
        ) { _, context in
            let shareID = try context.parameters.require("share_id")
            guard Self.isShareID(shareID) else { throw Self.unknown(shareID) }
            return SharePage.page.response()
        }
        registerRides(data: data, pages: pages)
    }

    /// Where the driver is, while the trip is active (nil if tracking cannot say: the page shows the rest).
    func driverPosition(_ trip: Trip) async -> LatestLocation? {
        guard trip.status == .active else { return nil }
        return try? await platform.call(Ops.Tracking.device, DeviceParams(deviceID: trip.deviceID)).location
    }

    /// A ride's page: `/ride/<share id>` (a trip's is `/<share id>`).
    static func rideURL(_ shareID: String, settings: GatewaySettings) -> String { "\(settings.publicURL)/ride/\(shareID)" }

    /// A ride's share link (`orders.share`) follows the ride: `/ride/<share id>` is the same page
    /// reading `/v1/ride-shares/<share id>`, which is where the ride stands and the trip driven now.
    func registerRides(data: RecordedRoutes, pages: RecordedRoutes) {
        let shareID = ["share_id": "7 letters and digits, from the ride's share link"]
        data.on(
            .get, "ride-shares/{share_id}",
            RouteDoc(
                "What a ride's share page shows: where the ride stands, the driver's name and car, the leg driven now and the driver's position; the route driven at the end",
                tag: .shareLinks, path: shareID, reply: RideShareView.self, "the shared ride", errors: [410, 429],
                op: "\(Ops.Orders.getByShare.fullName), \(Ops.Trips.get.fullName), \(Ops.Tracking.device.fullName)")
        ) { request, context in
            try limits.admitShareRead(request, context)
            let shareID = try context.parameters.require("share_id")
            guard Self.isRideShareID(shareID) else { throw Self.unknown(shareID) }
            let ride = try await platform.call(Ops.Orders.getByShare, ShareIDParams(shareID: shareID))
            var view = RideShareView(ride: .init(ride), shareURL: Self.rideURL(shareID, settings: settings), driver: ride.driver)
            if let tripID = ride.tripID, let leg = ride.leg {
                let trip = try await platform.call(Ops.Trips.get, TripIDParams(tripID: tripID))
                view.trip = .init(leg, trip: trip)
                view.location = await driverPosition(trip).map(RideShareView.Position.init)
            } else if ride.status == .completed, let summary = ride.summary {
                view.trip = .init(finished: ride, summary: summary)
            }
            return try JSONBody.response(view)
        }
        pages.on(
            .get, "ride/{share_id}",
            RouteDoc(
                "A ride's share page (HTML): the driver on the way, the ride, then its route and summary", tag: .shareLinks, path: shareID,
                replies: [.init(status: 200, description: "an HTML page", content: .html)], callsServices: false)
        ) { _, context in
            let shareID = try context.parameters.require("share_id")
            guard Self.isRideShareID(shareID) else { throw Self.unknown(shareID) }
            return SharePage.page.response()
        }
    }

    /// A trip's share id (7 of ShareID's letters), so `/dashboard` or a typo is never a share.
    static func isShareID(_ text: String) -> Bool { ShareID.isValid(text) }

    /// A ride's share id (`ShareID.isValidRide`).
    static func isRideShareID(_ text: String) -> Bool { ShareID.isValidRide(text) }

    static func unknown(_ shareID: String) -> GatewayError {
        GatewayError(.notFound, "unknown_share", "no trip is shared as \(shareID.prefix(20))")
    }
}
