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
            loads it with osm2pgrouting, replacing an earlier import, keeping the roads, directions and \
            speeds the embedded graph has (Tools/roads/build-graph.py decides them for both). Needs \
            python3, osmium-tool and osm2pgrouting here and the extensions' packages on the server.
            """)

    @Option(
        name: .customLong("database-url"),
        help: "The database: postgres://user[:password]@host[:port]/database (its user may create extensions).")
    var databaseURL: String

    @Option(help: "The OpenStreetMap extract (.osm.pbf); Tools/roads/fetch-extract.sh fetches the default.")
    var extract = ".build/roads/Helsinki.osm.pbf"

    @Option(
        name: .customLong("graph-script"),
        help: "The embedded graph's builder, which says which ways are roads, their directions and speeds.")
    var graphScript = "Tools/roads/build-graph.py"

    func run() async throws {
        let address: DatabaseAddress
        do { address = try DatabaseAddress(parsing: databaseURL) } catch { throw ValidationError("--database-url: \(error)") }
        Output.err("ridectl roads import-pg: importing \(extract) into \(address)…\n")
        do {
            let report = try await PgRoutingImport(extract: extract, address: address, graphScript: graphScript).run(
                logger: CLILogging.logger)
            Output.out("imported \(report) into \(address)\n")
        } catch {
            Output.err("ridectl roads import-pg: \(error)\n")
            throw ExitCode.failure
        }
    }
}
