import Foundation
import Geo
import Logging
import PostgresNIO
import Roads

/// Routes from PostgreSQL with PostGIS and pgRouting, over the tables `ridectl roads import-pg`
/// makes with osm2pgrouting (`ways`, `ways_vertices_pgr`): each end snaps to the nearest vertex
/// the import marked `routable` (the largest strongly connected part of the network),
/// `pgr_dijkstra` finds the quickest way by `cost_s`/`reverse_cost_s` (a negative reverse cost is
/// a one-way street), and the route is the edges' geometries in order.
public final class PgRoutingRoutes: RouteProvider {
    public var name: String { "pgrouting" }
    /// How far a point may be from the nearest vertex before it is outside the road data.
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
            if from.id == to.id {
                // The same vertex: no edge to drive, a route of no length at that corner.
                return .success(
                    Route(
                        line: Polyline(points: [from.point, to.point]), distance: 0, duration: 0,
                        steps: [RouteStep(name: nil, distance: 0, duration: 0, startIndex: 0)], kind: .road))
            }
            let edges = try await path(from: from.id, to: to.id)
            guard !edges.isEmpty else { return .failure(.unroutable(from: start, to: end)) }
            return .success(PgRoutingPath.route(edges))
        } catch let error as RouteError {
            return .failure(error)
        } catch {
            let hint = isMissingRoadData(error) ? " (no road data in this database: run ridectl roads import-pg)" : ""
            return .failure(.unavailable("pgRouting: \(postgresReason(error))\(hint)"))
        }
    }

    /// The routable vertex (the import's mark) nearest each point, if within `snapDistance`
    /// metres; both in one round trip. The index orders by degrees, which at Helsinki's latitude
    /// stretch east–west twice; the few nearest are then measured.
    private func snap(_ start: GeoPoint, _ end: GeoPoint) async throws -> (Snapped, Snapped) {
        let rows = try await client.query(
            """
            SELECT p.end_index, s.id, s.metres, ST_Y(s.the_geom), ST_X(s.the_geom)
            FROM (VALUES (0, \(start.longitude)::float8, \(start.latitude)::float8), (1, \(end.longitude)::float8, \(end.latitude)::float8))
              AS p(end_index, longitude, latitude)
            CROSS JOIN LATERAL (
              SELECT v.id, v.the_geom, ST_DistanceSphere(v.the_geom, ST_SetSRID(ST_MakePoint(p.longitude, p.latitude), 4326)) AS metres
              FROM (SELECT id, the_geom FROM ways_vertices_pgr WHERE routable
                    ORDER BY the_geom <-> ST_SetSRID(ST_MakePoint(p.longitude, p.latitude), 4326) LIMIT 8) v
              ORDER BY metres LIMIT 1) s
            """, logger: logger)
        var snapped: [Int: Snapped] = [:]
        for try await (index, id, distance, latitude, longitude) in rows.decode((Int, Int64, Double, Double, Double).self) where distance <= snapDistance {
            snapped[index] = Snapped(id: id, point: GeoPoint(latitude: latitude, longitude: longitude))
        }
        guard let from = snapped[0] else { throw RouteError.outsideRoadData(start) }
        guard let to = snapped[1] else { throw RouteError.outsideRoadData(end) }
        return (from, to)
    }

    struct Snapped {
        var id: Int64
        var point: GeoPoint
    }

    /// The edges of the quickest path, in order, each with its geometry in the direction driven.
    private func path(from source: Int64, to target: Int64) async throws -> [PgRoutingPath.Edge] {
        let rows = try await client.query(
            """
            SELECT d.cost, w.length_m, w.name,
              ARRAY(SELECT ST_Y(q.geom) FROM ST_DumpPoints(g.line) q ORDER BY q.path),
              ARRAY(SELECT ST_X(q.geom) FROM ST_DumpPoints(g.line) q ORDER BY q.path)
            FROM pgr_dijkstra(
              'SELECT gid AS id, source, target, cost_s AS cost, reverse_cost_s AS reverse_cost FROM ways', \(source), \(target), true) d
            JOIN ways w ON w.gid = d.edge
            CROSS JOIN LATERAL (SELECT CASE WHEN d.node = w.source THEN w.the_geom ELSE ST_Reverse(w.the_geom) END AS line) g
            ORDER BY d.seq
            """, logger: logger)
        var edges: [PgRoutingPath.Edge] = []
        for try await (cost, length, name, latitudes, longitudes) in rows.decode((Double, Double, String?, [Double], [Double]).self) {
            edges.append(.init(name: name, distance: length, duration: cost, points: zip(latitudes, longitudes).map { GeoPoint(latitude: $0, longitude: $1) }))
        }
        return edges
    }
}
