import ArgumentParser
import Foundation
import RoadServers

/// `ridectl roads`: road data for the route providers (docs/routing-servers.md).
struct RoadsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "roads", abstract: "Prepare road data for the route providers.", subcommands: [RoadsImportPgCommand.self])
}

/// `ridectl roads import-pg`: the OpenStreetMap extract into PostgreSQL for `pgrouting:` routes.
struct RoadsImportPgCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import-pg",
        abstract: "Import an OpenStreetMap extract into PostgreSQL with PostGIS and pgRouting (osmium + osm2pgrouting, car roads).",
        discussion: """
            Enables the postgis and pgrouting extensions, converts the extract to XML with osmium and \
            loads it with osm2pgrouting and its mapconfig for cars, replacing an earlier import. Needs \
            osmium-tool and osm2pgrouting here and the extensions' packages on the server.
            """)

    @Option(name: .customLong("database-url"), help: "The database: postgres://user[:password]@host[:port]/database (its user may create extensions).")
    var databaseURL: String

    @Option(help: "The OpenStreetMap extract (.osm.pbf); Tools/roads/fetch-extract.sh fetches the default.")
    var extract = ".build/roads/Helsinki.osm.pbf"

    @Option(help: "osm2pgrouting's mapconfig: which ways are roads and their speeds.")
    var mapconfig = "/usr/share/osm2pgrouting/mapconfig_for_cars.xml"

    func run() async throws {
        let address: DatabaseAddress
        do { address = try DatabaseAddress(parsing: databaseURL) } catch { throw ValidationError("--database-url: \(error)") }
        Output.err("ridectl roads import-pg: importing \(extract) into \(address)…\n")
        do {
            let report = try await PgRoutingImport(extract: extract, address: address, mapconfig: mapconfig).run(logger: CLILogging.logger)
            Output.out("imported \(report) into \(address)\n")
        } catch {
            Output.err("ridectl roads import-pg: \(error)\n")
            throw ExitCode.failure
        }
    }
}
