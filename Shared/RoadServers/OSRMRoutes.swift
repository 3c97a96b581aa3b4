import AsyncHTTPClient
import Foundation
import Geo
import Logging
import Roads

/// Routes from an OSRM server (or anything answering its HTTP route API): one
/// `GET {base}/route/v1/driving/{lon},{lat};{lon},{lat}?overview=full&geometries=geojson&steps=true`
/// per route. `NoSegment` is a point off the server's roads, `NoRoute` no way between them; a slow
/// server, another HTTP status or an answer that is not OSRM's JSON is `.unavailable`.
public struct OSRMRoutes: RouteProvider {
    public var name: String { "osrm" }
    /// The server's address, as `http://host:5000` (a path prefix is kept).
    public let base: URL
    public let profile: String
    /// How long a route may take, connection included.
    public let timeout: Duration
    let client: HTTPClient
    let logger: Logger
    /// OSRM's answers are a few kilobytes; anything far bigger is not one.
    static let maximumBody = 8 << 20

    public init(base: URL, profile: String = "driving", timeout: Duration = .seconds(2), client: HTTPClient = .shared, logger: Logger) {
        (self.base, self.profile, self.timeout, self.client, self.logger) = (base, profile, timeout, client, logger)
    }

    public func route(from start: GeoPoint, to end: GeoPoint) async throws(RouteError) -> Route {
        for point in [start, end] where !point.isValid { throw RouteError.outsideRoadData(point) }
        let url = requestURL(from: start, to: end)
        let fetched: (status: UInt, body: Data)?
        do {
            // The deadline covers the body too: a server may send its headers and then stall.
            fetched = try await withDeadline(timeout) { [client, timeout] in
                let response = try await client.execute(
                    HTTPClientRequest(url: url), timeout: .nanoseconds(Int64(timeout / .nanoseconds(1))))
                return (response.status.code, Data(try await response.body.collect(upTo: Self.maximumBody).readableBytesView))
            }
        } catch let error as HTTPClientError where error == .deadlineExceeded || error == .readTimeout || error == .connectTimeout {
            fetched = nil
        } catch {
            throw RouteError.unavailable("OSRM at \(base.absoluteString): \(error)")
        }
        guard let (status, body) = fetched else {
            throw RouteError.unavailable("OSRM at \(base.absoluteString) did not answer within \(timeout)")
        }
        guard let answer = try? JSONDecoder().decode(OSRMResponse.self, from: body) else {
            let what = status == 200 ? "an answer that is not OSRM's route JSON" : "HTTP \(status)"
            throw RouteError.unavailable("OSRM at \(base.absoluteString) answered \(what)")
        }
        // OSRM answers its own errors (NoSegment, NoRoute) with 400 and the code in the body.
        if status != 200, answer.code == "Ok" { throw RouteError.unavailable("OSRM at \(base.absoluteString) answered HTTP \(status)") }
        return try answer.route(from: start, to: end)
    }

    /// Coordinates are longitude first, as OSRM takes them.
    func requestURL(from start: GeoPoint, to end: GeoPoint) -> String {
        let prefix = base.absoluteString.hasSuffix("/") ? String(base.absoluteString.dropLast()) : base.absoluteString
        return "\(prefix)/route/v1/\(profile)/\(start.longitude),\(start.latitude);\(end.longitude),\(end.latitude)"
            + "?overview=full&geometries=geojson&steps=true"
    }
}
