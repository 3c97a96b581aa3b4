import Bus
import Foundation
import Hummingbird
import RideContract
import RideModels
import Wire

/// `/dashboard` for operators (HTTP Basic, as the HyperTrack routes): every device on a map,
/// open orders by status, which services have workers. `/dashboard/data` is what the page reads
/// every two seconds.
struct DashboardRoutes {
    let platform: PlatformCalls
    /// The tokens this gateway remembers: a suspended account's are forgotten at once.
    let tokens: TokenCache

    /// The services a healthy platform has workers for.
    static let services = [
        BusContract.Service.users, BusContract.Service.tracking, BusContract.Service.trips, BusContract.Service.orders,
        BusContract.Service.notifications,
    ]

    func register(on routes: RecordedRoutes) {
        routes.on(
            .get, "dashboard",
            RouteDoc(
                "The operator's dashboard (HTML): devices on a map, open orders by status, service health", tag: .operators,
                query: [OperatorAuthentication.askBasic], replies: [.init(status: 200, description: "an HTML page", content: .html)],
                callsServices: false)
        ) { request, _ in
            _ = try OperatorAuthentication.askBasic.read(from: request)
            return DashboardPage.page.response()
        }
        routes.on(
            .get, "dashboard/data",
            RouteDoc(
                "What the dashboard shows, as JSON", tag: .operators, reply: DashboardData.self, "services, devices and orders",
                op:
                    "\(Ops.Tracking.nearby.fullName), \(Ops.Orders.stats.fullName), \(Ops.Trips.get.fullName), \(Ops.Tracking.locations.fullName)"
            )
        ) { _, _ in
            try JSONBody.response(try await data())
        }
        // Ride reports: listed with each ride's timeline, answered (the reporter is notified).
        routes.on(
            .get, "dashboard/reports",
            OpRoute(
                Ops.Orders.reports, tag: .operators, summary: "Ride reports, newest first, each with its ride and timeline", fill: [:],
                query: ["status", "limit"]),
            calling: platform)
        routes.on(
            .post, "dashboard/reports/{report_id}/answer",
            OpRoute(Ops.Orders.answerReport, tag: .operators, fill: [:], path: ["report_id": "id"], body: .rest, errors: [409]),
            calling: platform)
        // A charge given back (a disputed cancellation fee, a fare reported wrong): the rider is notified.
        routes.on(
            .post, "dashboard/orders/{id}/refund",
            OpRoute(
                Ops.Orders.refund, tag: .operators, summary: "Refunds an order's charge, whole", fill: [:], path: ["id": "id"],
                errors: [404, 409]),
            calling: platform)
        // People: an account suspended (its sessions, sockets and device credential end) and reinstated.
        let suspend = OpRoute(
            Ops.Users.suspend, tag: .operators,
            summary: "Suspends an account: every session, token and device credential of it ends; it cannot log in until reinstated",
            fill: [:], path: ["id": "id"], body: .only(["reason"]), errors: [404])
        routes.on(.post, "dashboard/users/{id}/suspend", suspend.routeDoc) { request, context in
            let params = try await suspend.params(request, context, requestID: try IdempotencyKey.from(request))
            let reply = try await platform.reply(suspend.op, body: params)
            // This gateway stops taking the account's tokens now, not when its cache lets them go.
            if reply.status == Status.ok { tokens.forget(userID: params["id"]?.stringValue ?? "") }
            return JSONBody.response(reply)
        }
        routes.on(
            .post, "dashboard/users/{id}/reinstate",
            OpRoute(
                Ops.Users.reinstate, tag: .operators, summary: "Lifts an account's suspension: the person may log in again", fill: [:],
                path: ["id": "id"], errors: [404]),
            calling: platform)
        DashboardPeople(platform: platform).register(on: routes)
    }

    func data() async throws -> DashboardData {
        async let workers = withTaskGroup(of: (String, Bool).self) { group in
            for service in Self.services {
                group.addTask { (service, (try? await platform.client.hasWorkers(service, timeout: .seconds(1))) ?? false) }
            }
            return await group.reduce(into: [String: Bool]()) { $0[$1.0] = $1.1 }
        }
        // Every device the platform knows a position of: "near" the whole Earth.
        async let devices = try? platform.call(
            Ops.Tracking.nearby, NearbyQuery(location: GeoJSONPoint(latitude: 0, longitude: 0), radius: 20_037_508, limit: 1000))
        let orders = try? await platform.call(Ops.Orders.stats, StatsParams(openLimit: 200))
        async let rides = rides(orders?.open ?? [])
        return DashboardData(
            services: await workers, devices: (try? JSONValue(encoding: (await devices)?.devices ?? [])) ?? .array([]), orders: orders,
            rides: await rides)
    }

    /// The rides being driven now (at most `maxRides`): each trip's way left to drive and the
    /// driver's trail since the trip started (its last `trailLength` fixes of the first 1 000).
    func rides(_ open: [OrderStats.OpenOrder]) async -> [DashboardRide] {
        await withTaskGroup(of: DashboardRide?.self) { group in
            for order in open.prefix(Self.maxRides) {
                guard let tripID = order.tripID else { continue }
                group.addTask {
                    guard let trip = try? await platform.call(Ops.Trips.get, TripIDParams(tripID: tripID)), trip.status == .active else {
                        return nil
                    }
                    let history = try? await platform.call(
                        Ops.Tracking.locations, LocationsParams(deviceID: trip.deviceID, from: trip.startedAt, limit: 1000))
                    let trail = (history?.locations ?? []).suffix(Self.trailLength).map { [$0.longitude, $0.latitude] }
                    return DashboardRide(orderID: order.id, planned: trip.estimate?.route.polyline?.coordinates ?? [], trail: Array(trail))
                }
            }
            return await group.reduce(into: [DashboardRide]()) { rides, ride in if let ride { rides.append(ride) } }.sorted {
                $0.orderID < $1.orderID
            }
        }
    }

    static let maxRides = 50
    static let trailLength = 300
}

/// A ride on the dashboard's map: `[longitude, latitude]` positions.
@WireModel
struct DashboardRide: Codable, Sendable {
    var orderID: String
    /// The way left to drive (empty for a straight-line estimate).
    var planned: [[Double]]
    /// The driver's fixes since the trip started, oldest first.
    var trail: [[Double]]
}

/// `/dashboard/data`.
@WireModel
struct DashboardData: Codable, Sendable {
    /// Service name → whether it has a worker now.
    var services: [String: Bool]
    /// Tracking's Nearby entries: `device_id`, `name`, `location`, `available`, `last_seen`.
    var devices: JSONValue
    /// Nil when `orders` did not answer.
    var orders: OrderStats?
    /// The rides being driven now, with their routes and trails.
    var rides: [DashboardRide]
}
