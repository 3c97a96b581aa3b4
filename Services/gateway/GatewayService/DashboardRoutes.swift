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

    /// The services a healthy platform has workers for.
    static let services = [BusContract.Service.users, BusContract.Service.tracking, BusContract.Service.trips, BusContract.Service.orders, BusContract.Service.notifications]

    func register(on routes: RecordedRoutes) {
        routes.on(
            .get, "dashboard",
            RouteDoc(
                "The operator's dashboard (HTML): devices on a map, open orders by status, service health", tag: .operators,
                replies: [.init(status: 200, description: "an HTML page", content: .html)], callsServices: false)
        ) { _, _ in
            Response(status: .ok, headers: [.contentType: "text/html; charset=utf-8"], body: .init(byteBuffer: ByteBuffer(string: DashboardPage.html)))
        }
        routes.on(
            .get, "dashboard/data",
            RouteDoc(
                "What the dashboard shows, as JSON", tag: .operators, reply: DashboardData.self, "services, devices and orders",
                op: "\(Ops.Tracking.nearby.fullName), \(Ops.Orders.stats.fullName)")
        ) { _, _ in
            try JSONBody.response(try await data())
        }
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
            Ops.Tracking.nearby,
            [
                "location": ["type": "Point", "coordinates": [0, 0]], "radius": 20_037_508, "limit": 1000,
            ])
        async let orders = try? platform.call(Ops.Orders.stats, ["open_limit": 200])
        return DashboardData(services: await workers, devices: (try? JSONValue(encoding: (await devices)?.devices ?? [])) ?? .array([]), orders: await orders)
    }
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
}
