import Foundation
import Geo
import Logging
import RoadServers
import Roads
import Testing

/// The route-provider setting: every good value read, every bad one refused naming it.
@Suite struct RouteSourceTests {
    static let logger = Logger(label: "route-source-tests")

    @Test func readsEachKindOfValue() throws {
        #expect(try RouteSettings.parse("embedded") == .embedded)
        #expect(try RouteSettings.parse(" straight ") == .straight)
        #expect(
            try RouteSettings.parse("pgrouting:postgres://ride:secret@db.local:5433/roads")
                == .pgRouting(DatabaseAddress(host: "db.local", port: 5433, username: "ride", password: "secret", database: "roads")))
        #expect(
            try RouteSettings.parse("pgrouting:postgresql://ride@127.0.0.1/roads")
                == .pgRouting(DatabaseAddress(host: "127.0.0.1", username: "ride", database: "roads")))
        #expect(try RouteSettings.parse("osrm:http://osrm.local:5000") == .osrm(URL(string: "http://osrm.local:5000")!))
        #expect(try RouteSettings.parse("osrm:https://router.example/osrm") == .osrm(URL(string: "https://router.example/osrm")!))
    }

    @Test(arguments: [
        ("", "is none of embedded, straight"),
        ("osm", "\"osm\" is none of"),
        ("Embedded", "\"Embedded\" is none of"),
        ("pgrouting:", "is not a postgres://"),
        ("pgrouting:mysql://ride@db/roads", "mysql://ride@db/roads is not a postgres://"),
        ("pgrouting:postgres://db.local/roads", "names no user"),
        ("pgrouting:postgres://ride@db.local", "names no database"),
        ("pgrouting:postgres://ride@db.local:70000/roads", "port 70000"),
        ("osrm:", "must be an http:// or https:// URL"),
        ("osrm:ftp://osrm.local", "osrm:ftp://osrm.local: the OSRM server must be"),
        ("osrm:http://", "must be an http:// or https:// URL with a host"),
    ])
    func refusesABadValueNamingIt(value: String, message: String) {
        let error = #expect(throws: RouteSettingError.self) { try RouteSettings.parse(value) }
        #expect(error?.message.contains(message) == true, "\(String(describing: error))")
    }

    @Test func aPasswordNeverAppearsInAnError() {
        let error = #expect(throws: RouteSettingError.self) { try RouteSettings.parse("pgrouting:postgres://ride:hunter2@db.local/") }
        #expect(error.map { !$0.message.contains("hunter2") && $0.message.contains("***") } == true, "\(String(describing: error))")
        #expect(DatabaseAddress(host: "h", username: "u", password: "hunter2", database: "d").description == "postgres://u:***@h:5432/d")
    }

    @Test func makesTheProviderBehindTheFallback() async throws {
        struct Marker: RouteProvider {
            var name: String { "marker" }
            func route(from start: GeoPoint, to end: GeoPoint) async throws(RouteError) -> Route { throw .unavailable("marker") }
        }
        var asked = 0
        let embedded = try RouteSource.embedded.makeProvider(
            embedded: {
                asked += 1
                return Marker()
            }, logger: Self.logger)
        #expect(asked == 1)
        #expect((embedded as? FallbackRoutes)?.name == "marker")
        let straight = try RouteSource.straight.makeProvider(
            embedded: {
                asked += 1
                return Marker()
            }, logger: Self.logger)
        #expect(asked == 1, "only embedded builds the embedded provider")
        #expect((straight as? FallbackRoutes)?.name == "straight_line")
        let pg = try RouteSettings.parse("pgrouting:postgres://ride@127.0.0.1:1/roads").makeProvider(
            embedded: { Marker() }, logger: Self.logger)
        #expect((pg as? FallbackRoutes)?.primary is PgRoutingRoutes)
        let osrm = try RouteSettings.parse("osrm:http://127.0.0.1:1").makeProvider(embedded: { Marker() }, logger: Self.logger)
        #expect((osrm as? FallbackRoutes)?.primary is OSRMRoutes)
        // A provider that fails answers the straight line through the fallback.
        let route = try await embedded.route(from: HelsinkiPairs.kluuvi, to: HelsinkiPairs.bulevardi)
        #expect(route.kind == .straightLine)
    }
}
