import Foundation
import Geo
import Logging
import PostgresNIO
import Roads

/// Routes from PostgreSQL with PostGIS and pgRouting, over the tables `ridectl roads import-pg`
/// makes with osm2pgrouting (`ways`, `ways_vertices_pgr`) — the embedded graph's roads, directions
/// and speeds: each end snaps to the nearest point of the nearest edge the import marked
/// `routable` (the largest strongly connected part of the network), `pgr_withPoints` finds the
/// quickest way from point to point by `cost_s`/`reverse_cost_s` (a negative cost is a direction
/// not driven), and the route is the driven parts of the edges' geometries in order.
public final class PgRoutingRoutes: RouteProvider {
    public var name: String { "pgrouting" }
    /// How far a point may be from the nearest road before it is outside the road data.
    public let snapDistance: Double
    /// How long a route may take, connection included, before the database is unavailable.
    public let timeout: Duration
    let client: PostgresClient
    let logger: Logger
    /// The client's run loop when this provider started it; cancelled when the provider goes.
    private let running: Task<Void, Never>?

    /// A provider with its own connection pool to `address`, running until the provider is released.
    public convenience init(address: DatabaseAddress, snapDistance: Double = 300, timeout: Duration = .seconds(2), logger: Logger) {
        let client = PostgresClient(configuration: address.clientConfiguration(connectTimeout: timeout), backgroundLogger: logger)
        self.init(client: client, snapDistance: snapDistance, timeout: timeout, logger: logger, running: Task { await client.run() })
    }

    /// A provider over a client the caller runs (`client.run()` in its own task group).
    public convenience init(client: PostgresClient, snapDistance: Double = 300, timeout: Duration = .seconds(2), logger: Logger) {
        self.init(client: client, snapDistance: snapDistance, timeout: timeout, logger: logger, running: nil)
    }

    private init(client: PostgresClient, snapDistance: Double, timeout: Duration, logger: Logger, running: Task<Void, Never>?) {
        (self.client, self.snapDistance, self.timeout, self.logger, self.running) = (client, snapDistance, timeout, logger, running)
    }

    deinit { running?.cancel() }

    public func route(from start: GeoPoint, to end: GeoPoint) async throws(RouteError) -> Route {
        for point in [start, end] where !point.isValid { throw RouteError.outsideRoadData(point) }
        let answer: Result<Route, RouteError>?
        do {
            answer = try await withDeadline(timeout) { [self] in await self.find(from: start, to: end) }
        } catch {
            throw RouteError.unavailable("pgRouting: \(postgresReason(error))")
        }
        guard let answer else { throw RouteError.unavailable("pgRouting: no answer from PostgreSQL within \(timeout)") }
        return try answer.get()
    }

    /// The route, or why there is none; database errors become `.unavailable`.
    private func find(from start: GeoPoint, to end: GeoPoint) async -> Result<Route, RouteError> {
        do {
            let (from, to) = try await snap(start, end)
            if (from.edge == to.edge && from.fraction == to.fraction) || (from.vertex != nil && from.vertex == to.vertex) {
                // The same point of the same road: nothing to drive, a route of no length there.
                return .success(
                    Route(
                        line: Polyline(points: [from.point, to.point]), distance: 0, duration: 0,
                        steps: [RouteStep(name: nil, distance: 0, duration: 0, startIndex: 0)], kind: .road))
            }
            let edges = try await path(from: from, to: to)
            guard !edges.isEmpty else { return .failure(.unroutable(from: start, to: end)) }
            return .success(PgRoutingPath.route(edges))
        } catch let error as RouteError {
            return .failure(error)
        } catch {
            let hint = isMissingRoadData(error) ? " (no road data in this database: run ridectl roads import-pg)" : ""
            return .failure(.unavailable("pgRouting: \(postgresReason(error))\(hint)"))
        }
    }

    /// The nearest point of the nearest routable edge (the import's mark: both its ends routable)
    /// to each point, if within `snapDistance` metres; both in one round trip. As the embedded
    /// graph snaps: the edges in the box of `snapDistance` around the point by PostGIS's index
    /// (not the index's nearest few: it orders by degrees, which at Helsinki's latitude stretch
    /// east–west twice), then the nearest point of each in a conformal projection (Web
    /// Mercator), measured on the sphere.
    private func snap(_ start: GeoPoint, _ end: GeoPoint) async throws -> (Snapped, Snapped) {
        // The box `snapDistance` around each point (a degree of latitude is at least 110.5 km; one
        // of longitude that times the cosine), a little more: every edge it can snap to.
        let degrees = min(snapDistance, 1e7) / 110_000
        let rows = try await client.query(
            """
            SELECT p.end_index, s.gid, s.source, s.target, s.fraction, s.metres, ST_Y(s.closest), ST_X(s.closest)
            FROM (VALUES (0, \(start.longitude)::float8, \(start.latitude)::float8), (1, \(end.longitude)::float8, \(end.latitude)::float8))
              AS p(end_index, longitude, latitude)
            CROSS JOIN LATERAL (
              SELECT w.gid, w.source, w.target, ST_LineLocatePoint(w.the_geom, c.closest) AS fraction,
                ST_DistanceSphere(q.point, c.closest) AS metres, c.closest
              FROM (SELECT ST_SetSRID(ST_MakePoint(p.longitude, p.latitude), 4326) AS point) q
              CROSS JOIN LATERAL (
                SELECT gid, source, target, the_geom FROM ways
                WHERE routable AND the_geom && ST_Expand(q.point, \(degrees) / cos(radians(p.latitude)), \(degrees))) w
              CROSS JOIN LATERAL (
                SELECT ST_Transform(ST_ClosestPoint(ST_Transform(w.the_geom, 3857), ST_Transform(q.point, 3857)), 4326) AS closest) c
              ORDER BY metres LIMIT 1) s
            """, logger: logger)
        var snapped: [Int: Snapped] = [:]
        for try await (index, edge, source, target, fraction, distance, latitude, longitude) in rows.decode(
            (Int, Int64, Int64, Int64, Double, Double, Double, Double).self)
        where distance <= snapDistance {
            snapped[index] = Snapped(
                edge: edge, source: source, target: target, fraction: fraction, point: GeoPoint(latitude: latitude, longitude: longitude))
        }
        guard let from = snapped[0] else { throw RouteError.outsideRoadData(start) }
        guard let to = snapped[1] else { throw RouteError.outsideRoadData(end) }
        return (from, to)
    }

    /// A point on an edge: `fraction` 0 at its source, 1 at its target.
    struct Snapped {
        var edge: Int64
        var source: Int64
        var target: Int64
        var fraction: Double
        var point: GeoPoint

        /// The vertex the point is at, if it is at one of the edge's ends: pgRouting is given the
        /// vertex then (it finds no path from or to a point at fraction 0 or 1).
        var vertex: Int64? { fraction <= 0 ? source : fraction >= 1 ? target : nil }
    }

    /// The edges of the quickest path between the two snapped points (`pgr_withPoints`: the
    /// points are -1 and -2 on their edges, unless at a vertex), in order, each with the part
    /// driven (the first and last only from or to the point) in the direction driven.
    private func path(from start: Snapped, to end: Snapped) async throws -> [PgRoutingPath.Edge] {
        let (startFraction, endFraction) = ("\(start.fraction)::float8", "\(end.fraction)::float8")
        // Numbers only: nothing to escape. No point between vertices still needs a (empty) points query.
        var points: [String] = []
        if start.vertex == nil { points.append("SELECT 1 AS pid, \(start.edge)::bigint AS edge_id, \(startFraction) AS fraction") }
        if end.vertex == nil { points.append("SELECT 2 AS pid, \(end.edge)::bigint AS edge_id, \(endFraction) AS fraction") }
        if points.isEmpty { points.append("SELECT 1 AS pid, 0::bigint AS edge_id, 0.5::float8 AS fraction WHERE false") }
        let (from, to) = (start.vertex ?? -1, end.vertex ?? -2)
        let rows = try await client.query(
            """
            WITH d AS (
              SELECT d.seq, d.node, d.edge, d.cost, lead(d.node) OVER (ORDER BY d.seq) AS next
              FROM pgr_withPoints(
                'SELECT gid AS id, source, target, cost_s AS cost, reverse_cost_s AS reverse_cost FROM ways',
                '\(unescaped: points.joined(separator: " UNION ALL "))',
                \(unescaped: "\(from)"), \(unescaped: "\(to)"), true, 'b', false) d)
            SELECT d.cost, ST_Length(g.line::geography, false), w.name,
              ARRAY(SELECT ST_Y(q.geom) FROM ST_DumpPoints(g.line) q ORDER BY q.path),
              ARRAY(SELECT ST_X(q.geom) FROM ST_DumpPoints(g.line) q ORDER BY q.path)
            FROM d JOIN ways w ON w.gid = d.edge
            CROSS JOIN LATERAL (SELECT
              CASE WHEN d.node = -1 THEN \(unescaped: startFraction) WHEN d.node = -2 THEN \(unescaped: endFraction) WHEN d.node = w.source THEN 0 ELSE 1 END AS a,
              CASE WHEN d.next = -1 THEN \(unescaped: startFraction) WHEN d.next = -2 THEN \(unescaped: endFraction) WHEN d.next = w.source THEN 0 ELSE 1 END AS b) p
            CROSS JOIN LATERAL (SELECT CASE WHEN p.a <= p.b THEN ST_LineSubstring(w.the_geom, p.a, p.b)
              ELSE ST_Reverse(ST_LineSubstring(w.the_geom, p.b, p.a)) END AS line) g
            ORDER BY d.seq
            """, logger: logger)
        var edges: [PgRoutingPath.Edge] = []
        for try await (cost, length, name, latitudes, longitudes) in rows.decode((Double, Double, String?, [Double], [Double]).self) {
            edges.append(
                .init(
                    name: name, distance: length, duration: cost,
                    points: zip(latitudes, longitudes).map { GeoPoint(latitude: $0, longitude: $1) }))
        }
        return edges
    }
}
