import Foundation
import Geo
import Logging
import RoadServers
import Roads
import Testing

/// `PgRoutingRoutes` against a real PostgreSQL with PostGIS and pgRouting, the Helsinki extract
/// imported into it.
@Suite struct PgRoutingRoutesTests {
    static func provider(timeout: Duration = HelsinkiDatabase.queryDeadline) async throws -> PgRoutingRoutes {
        PgRoutingRoutes(address: try await HelsinkiDatabase.imported().address, timeout: timeout, logger: HelsinkiDatabase.logger)
    }

    @Test func theImportReportsTheRoadsOfTheExtract() async throws {
        let report = try await HelsinkiDatabase.imported().report
        #expect(report.edges > 1000 && report.vertices > 1000, "\(report)")
        #expect(report.oneWayEdges > 0, "central Helsinki has one-way streets: \(report)")
        #expect(report.routableVertices > report.vertices * 3 / 4 && report.routableVertices < report.vertices, "\(report)")
    }

    @Test func conformsOnTheHelsinkiPairs() async throws {
        let provider = try await Self.provider()
        #expect(provider.name == "pgrouting")
        await RouteProviderConformance.check(provider, pairs: HelsinkiPairs.pairs)
        await RouteProviderConformance.checkOutside(provider, inside: HelsinkiPairs.railwaySquare, outside: HelsinkiPairs.farAway)
        await RouteProviderConformance.checkInvalid(provider, inside: HelsinkiPairs.railwaySquare)
    }

    @Test func stepsAreNamedStreetsAndTheLineFollowsThem() async throws {
        let route = try await Self.provider().route(from: HelsinkiPairs.esplanadi, to: HelsinkiPairs.toolonlahti)
        #expect(route.steps.count >= 2)
        #expect(route.steps.contains { $0.name != nil }, "\(route.steps)")
        // Neighbouring steps are different streets: a street's edges are one step.
        for (a, b) in zip(route.steps, route.steps.dropFirst()) { #expect(a.name != b.name) }
        #expect(route.line.points.count > route.steps.count)
    }

    @Test func oneWayStreetsMakeTheTwoDirectionsDiffer() async throws {
        let provider = try await Self.provider()
        var differ = false
        for (start, end) in HelsinkiPairs.pairs {
            let there = try await provider.route(from: start, to: end)
            let back = try await provider.route(from: end, to: start)
            if abs(there.distance - back.distance) > 1 { differ = true }
        }
        #expect(differ, "with one-way streets some trip is longer one way than the other")
    }

    @Test func aPointBesideAOneWayTrapSnapsToAStreetItCanLeave() async throws {
        // Kiasma's corner of Postikuja: the streets nearest it lead only in; the import leaves
        // them out of the routable part, so the point snaps to a street that leads out.
        let trap = GeoPoint(latitude: 60.1720, longitude: 24.9378)
        await RouteProviderConformance.check(
            try await Self.provider(), pairs: [(trap, HelsinkiPairs.senateSquare), (HelsinkiPairs.senateSquare, trap)])
    }

    @Test func aPlaceWhoseStreetsAreAllClosedIsUnroutable() async throws {
        // An import of its own, with every edge at the vertex by the Senate Square closed (a
        // negative cost is no way, to pgRouting) after the import marked it routable.
        let address = try await HelsinkiDatabase.newDatabase()
        _ = try await PgRoutingImport(
            extract: try await HelsinkiDatabase.extract(), address: address, graphScript: HelsinkiDatabase.graphScript
        ).run(
            logger: HelsinkiDatabase.logger)
        try await HelsinkiDatabase.execute(
            """
            UPDATE ways SET cost_s = -1, reverse_cost_s = -1
            FROM (SELECT id FROM ways_vertices_pgr WHERE routable ORDER BY the_geom <-> ST_SetSRID(ST_MakePoint(24.9510, 60.1690), 4326) LIMIT 1) v
            WHERE ways.source = v.id OR ways.target = v.id
            """, in: address)
        let provider = PgRoutingRoutes(address: address, timeout: HelsinkiDatabase.queryDeadline, logger: HelsinkiDatabase.logger)
        do throws(RouteError) {
            let route = try await provider.route(from: HelsinkiPairs.kluuvi, to: HelsinkiPairs.senateSquare)
            Issue.record("a route to the closed place: \(route.distance) m")
        } catch {
            #expect(error == .unroutable(from: HelsinkiPairs.kluuvi, to: HelsinkiPairs.senateSquare))
        }
    }

    @Test func aDatabaseWithoutTheRoadsIsUnavailable() async throws {
        let empty = try await HelsinkiDatabase.newDatabase()
        let provider = PgRoutingRoutes(address: empty, timeout: HelsinkiDatabase.queryDeadline, logger: HelsinkiDatabase.logger)
        await Self.expectUnavailable(provider, containing: "no road data in this database: run ridectl roads import-pg")
    }

    @Test func aServerThatIsNotThereIsUnavailableWithinTheTimeout() async throws {
        let nobody = DatabaseAddress(host: "127.0.0.1", port: 1, username: "ride", database: "nothing")
        let provider = PgRoutingRoutes(address: nobody, timeout: .milliseconds(500), logger: HelsinkiDatabase.logger)
        // The pool retries a refused connection for a minute and more; it is the deadline that answers.
        // How soon it answers depends on how busy this process's two threads are (seen 37 s in CI),
        // so the test asserts who answered, not a wall-clock bound.
        await Self.expectUnavailable(provider, containing: "no answer from PostgreSQL within")
    }

    @Test func behindFallbackAFailureIsTheStraightLine() async throws {
        let nobody = DatabaseAddress(host: "127.0.0.1", port: 1, username: "ride", database: "nothing")
        let provider = FallbackRoutes(
            PgRoutingRoutes(address: nobody, timeout: .milliseconds(300), logger: HelsinkiDatabase.logger), logger: HelsinkiDatabase.logger)
        let route = try await provider.route(from: HelsinkiPairs.kluuvi, to: HelsinkiPairs.bulevardi)
        #expect(route.kind == .straightLine)
    }

    static func expectUnavailable(_ provider: any RouteProvider, containing text: String, sourceLocation: SourceLocation = #_sourceLocation)
        async
    {
        do throws(RouteError) {
            _ = try await provider.route(from: HelsinkiPairs.kluuvi, to: HelsinkiPairs.bulevardi)
            Issue.record("a route", sourceLocation: sourceLocation)
        } catch {
            guard case .unavailable(let why) = error else {
                Issue.record("\(error)", sourceLocation: sourceLocation)
                return
            }
            #expect(text.isEmpty || why.contains(text), "\(why)", sourceLocation: sourceLocation)
        }
    }
}
