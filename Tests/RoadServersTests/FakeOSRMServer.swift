import Foundation
import Geo
import Hummingbird
import Logging

/// An HTTP server on a free port of 127.0.0.1 answering OSRM's route API in OSRM's documented JSON
/// shape. Each path prefix behaves differently, so one server serves every case:
/// `/ok` routes anything inside the Helsinki extract's box (an L-shaped route of two named steps;
/// `NoSegment` for a point outside it), `/noroute` answers `NoRoute`, `/slow` takes 180 s,
/// `/garbage` answers HTML, `/broken` HTTP 503, `/partial` JSON without routes.
enum FakeOSRMServer {
    /// The extract's box; outside it a point has no road.
    static let latitudes = 60.16...60.18
    static let longitudes = 24.93...24.96

    /// Runs the server while `body` runs, giving it the server's base URL (`http://127.0.0.1:PORT`).
    static func with(_ body: @escaping @Sendable (URL) async throws -> Void) async throws {
        let router = Router()
        router.get("ok/route/v1/driving/:coordinates") { _, context in try answer(context.parameters.require("coordinates")) }
        router.get("noroute/route/v1/driving/:coordinates") { _, _ in
            json(400, #"{"code":"NoRoute","message":"Impossible route between points","routes":[]}"#)
        }
        router.get("slow/route/v1/driving/:coordinates") { _, context in
            try await Task.sleep(for: .seconds(180))
            return try answer(context.parameters.require("coordinates"))
        }
        router.get("garbage/route/v1/driving/:coordinates") { _, _ in json(200, "<html><body>502 Bad Gateway</body></html>") }
        router.get("broken/route/v1/driving/:coordinates") { _, _ in json(503, "Service Unavailable") }
        router.get("partial/route/v1/driving/:coordinates") { _, _ in json(200, #"{"code":"Ok","waypoints":[]}"#) }
        let (ports, portSink) = AsyncStream.makeStream(of: Int.self)
        // Quiet: stopping the server at the end of a test is otherwise logged as an error.
        var logger = Logger(label: "fake-osrm")
        logger.logLevel = .critical
        let app = Application(
            router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { channel in portSink.yield(channel.localAddress?.port ?? 0) }, logger: logger)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await app.run() }
            var iterator = ports.makeAsyncIterator()
            let port = await iterator.next() ?? 0
            defer { group.cancelAll() }
            try await body(URL(string: "http://127.0.0.1:\(port)")!)
        }
    }

    static func json(_ status: Int, _ text: String) -> Response {
        Response(
            status: .init(code: status), headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(string: text)))
    }

    /// `lon,lat;lon,lat` → a route along the latitude then the longitude, as OSRM would shape it.
    static func answer(_ coordinates: String) throws -> Response {
        let points = coordinates.split(separator: ";").map { pair -> GeoPoint? in
            let numbers = pair.split(separator: ",").compactMap { Double($0) }
            return numbers.count == 2 ? GeoPoint(latitude: numbers[1], longitude: numbers[0]) : nil
        }
        guard points.count == 2, let start = points[0], let end = points[1] else {
            return json(400, #"{"code":"InvalidQuery","message":"Query string malformed close to position 0"}"#)
        }
        for (index, point) in [start, end].enumerated() where !latitudes.contains(point.latitude) || !longitudes.contains(point.longitude) {
            return json(400, #"{"code":"NoSegment","message":"Could not find a matching segment for coordinate \#(index)"}"#)
        }
        let corner = GeoPoint(latitude: start.latitude, longitude: end.longitude)
        let legs = [(name: "Aleksanterinkatu", from: start, to: corner), (name: "Mikonkatu", from: corner, to: end)].map { leg in
            let distance = leg.from.distance(to: leg.to)
            return (leg.name, distance, distance / 8, [leg.from.coordinates, leg.to.coordinates])
        }
        let distance = legs.reduce(0) { $0 + $1.1 }
        func step(_ name: String, _ distance: Double, _ coordinates: [[Double]]) -> [String: Any] {
            [
                "name": name, "distance": distance, "duration": distance / 8,
                "geometry": ["type": "LineString", "coordinates": coordinates], "mode": "driving",
            ]
        }
        let steps = legs.map { step($0.0, $0.1, $0.3) } + [step("Mikonkatu", 0, [end.coordinates, end.coordinates])]
        let route: [String: Any] = [
            "distance": distance, "duration": distance / 8, "weight": distance / 8, "weight_name": "routability",
            "geometry": ["type": "LineString", "coordinates": [start.coordinates, corner.coordinates, end.coordinates]],
            "legs": [["distance": distance, "duration": distance / 8, "summary": "Aleksanterinkatu, Mikonkatu", "steps": steps]],
        ]
        let body: [String: Any] = [
            "code": "Ok", "routes": [route], "waypoints": [["name": "Aleksanterinkatu", "location": start.coordinates]],
        ]
        return json(200, String(decoding: try JSONSerialization.data(withJSONObject: body), as: UTF8.self))
    }
}
