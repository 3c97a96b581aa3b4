import Foundation
import Logging
import PostgresNIO

/// Loads an OpenStreetMap extract into PostgreSQL for `PgRoutingRoutes`: enables PostGIS and
/// pgRouting, converts the `.osm.pbf` to XML with osmium (osm2pgrouting reads only XML) and runs
/// osm2pgrouting with the cars' mapconfig, replacing any earlier import (`--clean`).
public struct PgRoutingImport: Sendable {
    public var extract: String
    public var address: DatabaseAddress
    public var mapconfig: String
    /// Where the programs are looked for: `PATH`'s folders.
    public var searchPath: [String]

    public init(
        extract: String, address: DatabaseAddress, mapconfig: String = "/usr/share/osm2pgrouting/mapconfig_for_cars.xml",
        searchPath: [String] = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":").map(String.init)
    ) {
        (self.extract, self.address, self.mapconfig, self.searchPath) = (extract, address, mapconfig, searchPath)
    }

    /// What was imported.
    public struct Report: Sendable, CustomStringConvertible {
        public var edges: Int
        public var vertices: Int
        public var oneWayEdges: Int
        public var seconds: Double
        public var description: String {
            "\(edges) road edges (\(oneWayEdges) one-way) between \(vertices) vertices in \(String(format: "%.1f", seconds)) s"
        }
    }

    public func run(logger: Logger) async throws(PgRoutingImportError) -> Report {
        let started = ContinuousClock.now
        guard FileManager.default.isReadableFile(atPath: extract) else {
            throw PgRoutingImportError("the extract \(extract) does not exist or cannot be read (Tools/roads/fetch-extract.sh fetches it)")
        }
        guard FileManager.default.isReadableFile(atPath: mapconfig) else {
            throw PgRoutingImportError("osm2pgrouting's mapconfig \(mapconfig) is missing (apt-get install osm2pgrouting)")
        }
        let osmium = try tool("osmium", package: "osmium-tool")
        let osm2pgrouting = try tool("osm2pgrouting", package: "osm2pgrouting")
        try await prepareDatabase(logger: logger)

        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("ride-roads-\(UUID().uuidString.prefix(8))").path
        do { try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true) } catch {
            throw PgRoutingImportError("cannot make the work folder \(folder): \(error)")
        }
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let xml = "\(folder)/extract.osm"
        try await ToolRun.run(osmium, ["cat", extract, "-o", xml, "--overwrite"], what: "osmium converting \(extract) to XML")
        var environment = ProcessInfo.processInfo.environment
        if let password = address.password { environment["PGPASSWORD"] = password }
        try await ToolRun.run(
            osm2pgrouting,
            ["-f", xml, "-c", mapconfig, "-d", address.database, "-U", address.username, "-h", address.host, "-p", "\(address.port)", "--clean"],
            environment: environment, what: "osm2pgrouting importing into \(address)")
        var report = try await count(logger: logger)
        report.seconds = (ContinuousClock.now - started) / .seconds(1)
        guard report.edges > 0 else { throw PgRoutingImportError("osm2pgrouting imported no roads from \(extract): is it an extract with car roads?") }
        return report
    }

    private func tool(_ name: String, package: String) throws(PgRoutingImportError) -> String {
        guard let path = searchPath.map({ "\($0)/\(name)" }).first(where: FileManager.default.isExecutableFile(atPath:)) else {
            throw PgRoutingImportError("\(name) is not installed (apt-get install \(package))")
        }
        return path
    }

    /// Connects (failing fast and clearly when the server is not there) and enables the extensions.
    private func prepareDatabase(logger: Logger) async throws(PgRoutingImportError) {
        try await withClient(logger: logger) { client in
            for name in ["postgis", "pgrouting"] {
                do { try await client.query("CREATE EXTENSION IF NOT EXISTS \(unescaped: name) CASCADE", logger: logger) } catch {
                    throw PgRoutingImportError(
                        "cannot enable the \(name) extension in \(address): \(postgresReason(error)) (apt-get install postgresql-15-postgis-3 postgresql-15-pgrouting on the server)"
                    )
                }
            }
        }
    }

    private func count(logger: Logger) async throws(PgRoutingImportError) -> Report {
        try await withClient(logger: logger) { client in
            let rows = try await client.query(
                "SELECT (SELECT count(*) FROM ways), (SELECT count(*) FROM ways_vertices_pgr), (SELECT count(*) FROM ways WHERE reverse_cost_s < 0)",
                logger: logger)
            for try await (edges, vertices, oneWay) in rows.decode((Int, Int, Int).self) {
                return Report(edges: edges, vertices: vertices, oneWayEdges: oneWay, seconds: 0)
            }
            return Report(edges: 0, vertices: 0, oneWayEdges: 0, seconds: 0)
        }
    }

    /// Runs `body` with a client of its own, connected within 5 s or a clear error.
    private func withClient<T: Sendable>(logger: Logger, _ body: @escaping @Sendable (PostgresClient) async throws -> T) async throws(PgRoutingImportError) -> T {
        let client = PostgresClient(configuration: address.clientConfiguration(connectTimeout: .seconds(5)), backgroundLogger: logger)
        let running = Task { await client.run() }
        defer { running.cancel() }
        let answer: T?
        do {
            answer = try await withDeadline(.seconds(30)) {
                _ = try await client.query("SELECT 1", logger: logger)
                return try await body(client)
            }
        } catch let error as PgRoutingImportError {
            throw error
        } catch let error as PSQLError where error.code == .server {
            throw PgRoutingImportError("PostgreSQL at \(address) refused: \(postgresReason(error))")
        } catch {
            throw PgRoutingImportError("cannot reach PostgreSQL at \(address): \(postgresReason(error))")
        }
        guard let answer else { throw PgRoutingImportError("PostgreSQL at \(address) did not answer within 30 s") }
        return answer
    }
}

/// An import that cannot be done; the message names what is wrong.
public struct PgRoutingImportError: Error, CustomStringConvertible {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
