import Geo
import RoadServers
import Roads
import Testing

/// The embedded provider passes the checks every provider passes, on the same Helsinki trips, and
/// agrees with pgRouting — the same extract, imported by osm2pgrouting — on their distances.
@Suite struct EmbeddedConformanceTests {
    @Test func theEmbeddedProviderPassesTheSharedChecks() async throws {
        let embedded = try EmbeddedRoutes.helsinki()
        await RouteProviderConformance.check(embedded, pairs: HelsinkiPairs.pairs)
        await RouteProviderConformance.checkOutside(embedded, inside: HelsinkiPairs.railwaySquare, outside: GeoPoint(latitude: 60.3, longitude: 25.3))
        await RouteProviderConformance.checkInvalid(embedded, inside: HelsinkiPairs.railwaySquare)
    }

    @Test func embeddedAndPgRoutingAgreeWithinFivePercent() async throws {
        let address = try await HelsinkiDatabase.imported().address
        let pgRouting = PgRoutingRoutes(address: address, timeout: .seconds(5), logger: HelsinkiDatabase.logger)
        try await RouteProviderConformance.checkAgree(pgRouting, try EmbeddedRoutes.helsinki(), pairs: HelsinkiPairs.pairs, tolerance: 0.05)
    }
}
