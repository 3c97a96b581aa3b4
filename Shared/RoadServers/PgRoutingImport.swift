import Foundation
import Logging
import PostgresNIO

/// Loads an OpenStreetMap extract into PostgreSQL for `PgRoutingRoutes`, as the same road
/// network the embedded graph is (docs/routing-servers.md): enables PostGIS and pgRouting,
/// converts the `.osm.pbf` to XML with osmium (osm2pgrouting reads only XML; the nodes renumbered,
/// see `run`), runs osm2pgrouting with a mapconfig of
/// the graph's road classes, replacing any earlier import (`--clean`), then keeps only the ways
/// the graph keeps, with its directions and speeds — both from `Tools/roads/build-graph.py`.
public struct PgRoutingImport: Sendable {
    public var extract: String
    public var address: DatabaseAddress
    /// `Tools/roads/build-graph.py`: the one statement of which ways are roads, which way they
    /// go and how fast (with `road-classes.tsv` beside it).
    public var graphScript: String
    /// Where the programs are looked for: `PATH`'s folders.
    public var searchPath: [String]

    public init(
        extract: String, address: DatabaseAddress, graphScript: String = "Tools/roads/build-graph.py",
        searchPath: [String] = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":").map(String.init)
    ) {
        (self.extract, self.address, self.graphScript, self.searchPath) = (extract, address, graphScript, searchPath)
    }

    /// What was imported.
    public struct Report: Sendable, CustomStringConvertible {
        public var edges: Int
        public var oneWayEdges: Int
        public var vertices: Int
        /// Vertices in the largest strongly connected part, the ones routes start and end at.
        public var routableVertices: Int
        public var seconds: Double
        public var description: String {
            "\(edges) road edges (\(oneWayEdges) one-way) between \(vertices) vertices (\(routableVertices) routable) in \(String(format: "%.1f", seconds)) s"
        }
    }

    public func run(logger: Logger) async throws(PgRoutingImportError) -> Report {
        let started = ContinuousClock.now
        guard FileManager.default.isReadableFile(atPath: extract) else {
            throw PgRoutingImportError("the extract \(extract) does not exist or cannot be read (Tools/roads/fetch-extract.sh fetches it)")
        }
        guard FileManager.default.isReadableFile(atPath: graphScript) else {
            throw PgRoutingImportError("the road rules \(graphScript) are missing (Tools/roads/build-graph.py in the repository)")
        }
        let python = try tool("python3", package: "python3")
        let osmium = try tool("osmium", package: "osmium-tool")
        let osm2pgrouting = try tool("osm2pgrouting", package: "osm2pgrouting")
        try await prepareDatabase(logger: logger)

        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("ride-roads-\(UUID().uuidString.prefix(8))").path
        do { try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true) } catch {
            throw PgRoutingImportError("cannot make the work folder \(folder): \(error)")
        }
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let (xml, mapconfig, rules) = ("\(folder)/extract.osm", "\(folder)/mapconfig.xml", "\(folder)/ways.tsv")
        try await Self.run(python, [graphScript, "--mapconfig", mapconfig], what: "\(graphScript) writing osm2pgrouting's mapconfig")
        try await Self.run(python, [graphScript, "--ways", extract, rules], what: "\(graphScript) reading the roads of \(extract)")
        // The extract is clipped: some ways name nodes it does not hold. With the nodes' own ids
        // osm2pgrouting drew such ways as straight edges to unrelated nodes (up to 1.6 km across
        // central Helsinki); with the nodes renumbered, each way is the length the graph gives it.
        // Ways keep their ids (the rules name them).
        try await Self.run(
            osmium, ["renumber", "-t", "node", extract, "-o", xml, "--overwrite"], what: "osmium converting \(extract) to XML")
        var environment = ProcessInfo.processInfo.environment
        if let password = address.password { environment["PGPASSWORD"] = password }
        try await Self.run(
            osm2pgrouting,
            [
                "-f", xml, "-c", mapconfig, "-d", address.database, "-U", address.username, "-h", address.host, "-p", "\(address.port)",
                "--clean",
            ],
            environment: environment, what: "osm2pgrouting importing into \(address)")
        try await applyRules(try readRules(rules), logger: logger)
        try await markRoutable(logger: logger)
        var report = try await count(logger: logger)
        report.seconds = (ContinuousClock.now - started) / .seconds(1)
        guard report.edges > 0 else {
            throw PgRoutingImportError("osm2pgrouting imported no roads from \(extract): is it an extract with car roads?")
        }
        return report
    }

    private func tool(_ name: String, package: String) throws(PgRoutingImportError) -> String {
        do { return try ToolRun.find(name, package: package, searchPath: searchPath) } catch {
            throw PgRoutingImportError(error.description)
        }
    }

    private static func run(_ program: String, _ arguments: [String], environment: [String: String]? = nil, what: String)
        async throws(PgRoutingImportError)
    {
        do { try await ToolRun.run(program, arguments, environment: environment, what: what) } catch {
            throw PgRoutingImportError(error.description)
        }
    }

    /// Connects (failing fast and clearly when the server is not there) and enables the extensions.
    private func prepareDatabase(logger: Logger) async throws(PgRoutingImportError) {
        try await withClient(logger: logger) { connection in
            for name in ["postgis", "pgrouting"] {
                do { try await connection.query("CREATE EXTENSION IF NOT EXISTS \(unescaped: name) CASCADE", logger: logger) } catch {
                    throw PgRoutingImportError(
                        "cannot enable the \(name) extension in \(address): \(postgresReason(error)) (on a Debian server: apt-get install postgresql-<major>-postgis-3 postgresql-<major>-pgrouting, <major> its PostgreSQL's)"
                    )
                }
            }
        }
    }

    /// (way id, km/h forwards or 0, km/h backwards or 0) of every way the graph drives.
    private func readRules(_ path: String) throws(PgRoutingImportError) -> [(Int64, Int, Int)] {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
            throw PgRoutingImportError("cannot read the road rules \(path)")
        }
        var rules: [(Int64, Int, Int)] = []
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: "\t")
            guard fields.count == 3, let id = Int64(fields[0]), let forward = Int(fields[1]), let backward = Int(fields[2]) else {
                throw PgRoutingImportError("a road rule that is not 'way id, km/h, km/h': \(line)")
            }
            rules.append((id, forward, backward))
        }
        return rules
    }

    /// Makes osm2pgrouting's edges the graph's roads: only the ways the graph keeps, their length
    /// on the sphere (as the graph measures it), their direction and speed from the rules, and
    /// the costs in seconds from those (osm2pgrouting's own read `maxspeed` and `oneway` otherwise).
    private func applyRules(_ rules: [(Int64, Int, Int)], logger: Logger) async throws(PgRoutingImportError) {
        try await withClient(logger: logger) { connection in
            try await connection.query("DROP TABLE IF EXISTS road_rules", logger: logger)
            try await connection.query(
                "CREATE TABLE road_rules (osm_id bigint PRIMARY KEY, forward_kmh int NOT NULL, backward_kmh int NOT NULL)", logger: logger)
            for start in stride(from: 0, to: rules.count, by: 1000) {
                // Numbers only, parsed above: nothing to escape.
                let values = rules[start..<min(start + 1000, rules.count)].map { "(\($0.0), \($0.1), \($0.2))" }.joined(separator: ", ")
                try await connection.query(PostgresQuery(unsafeSQL: "INSERT INTO road_rules VALUES \(values)"), logger: logger)
            }
            try await connection.query(
                "DELETE FROM ways w WHERE NOT EXISTS (SELECT 1 FROM road_rules r WHERE r.osm_id = w.osm_id)", logger: logger)
            try await connection.query(
                "DELETE FROM ways_vertices_pgr v WHERE NOT EXISTS (SELECT 1 FROM ways w WHERE w.source = v.id OR w.target = v.id)",
                logger: logger)
            try await connection.query(
                """
                UPDATE ways w SET length_m = ST_Length(w.the_geom::geography, false),
                  maxspeed_forward = r.forward_kmh, maxspeed_backward = r.backward_kmh,
                  one_way = CASE WHEN r.backward_kmh = 0 THEN 1 WHEN r.forward_kmh = 0 THEN 2 ELSE 0 END
                FROM road_rules r WHERE r.osm_id = w.osm_id
                """, logger: logger)
            try await connection.query(
                """
                UPDATE ways SET cost_s = CASE WHEN maxspeed_forward > 0 THEN length_m * 3.6 / maxspeed_forward ELSE -1 END,
                  reverse_cost_s = CASE WHEN maxspeed_backward > 0 THEN length_m * 3.6 / maxspeed_backward ELSE -1 END
                """, logger: logger)
            try await connection.query("DROP TABLE road_rules", logger: logger)
        }
    }

    /// Marks the vertices of the largest strongly connected part of the network `routable`: only
    /// they are snapped to, so that a point beside a one-way trap or a closed-off courtyard snaps
    /// to a street from which every other routable street can be reached, and back.
    private func markRoutable(logger: Logger) async throws(PgRoutingImportError) {
        try await withClient(logger: logger) { connection in
            try await connection.query(
                "ALTER TABLE ways_vertices_pgr ADD COLUMN IF NOT EXISTS routable boolean NOT NULL DEFAULT false", logger: logger)
            try await connection.query(
                """
                WITH parts AS (
                  SELECT component, node FROM pgr_strongComponents(
                    'SELECT gid AS id, source, target, cost_s AS cost, reverse_cost_s AS reverse_cost FROM ways')),
                largest AS (SELECT component FROM parts GROUP BY component ORDER BY count(*) DESC LIMIT 1)
                UPDATE ways_vertices_pgr v SET routable = true FROM parts JOIN largest USING (component) WHERE v.id = parts.node
                """, logger: logger)
            // The edges between two of them are the ones a point snaps to.
            try await connection.query("ALTER TABLE ways ADD COLUMN IF NOT EXISTS routable boolean NOT NULL DEFAULT false", logger: logger)
            try await connection.query(
                """
                UPDATE ways w SET routable = true FROM ways_vertices_pgr a, ways_vertices_pgr b
                WHERE a.id = w.source AND b.id = w.target AND a.routable AND b.routable
                """, logger: logger)
        }
    }

    private func count(logger: Logger) async throws(PgRoutingImportError) -> Report {
        try await withClient(logger: logger) { connection in
            let rows = try await connection.query(
                """
                SELECT (SELECT count(*) FROM ways), (SELECT count(*) FROM ways WHERE reverse_cost_s < 0),
                  (SELECT count(*) FROM ways_vertices_pgr), (SELECT count(*) FROM ways_vertices_pgr WHERE routable)
                """, logger: logger)
            for try await (edges, oneWay, vertices, routable) in rows.decode((Int, Int, Int, Int).self) {
                return Report(edges: edges, oneWayEdges: oneWay, vertices: vertices, routableVertices: routable, seconds: 0)
            }
            return Report(edges: 0, oneWayEdges: 0, vertices: 0, routableVertices: 0, seconds: 0)
        }
    }

    /// Runs `body` on a connection of its own: one connection (not a pool, which would retry a
    /// server that is not there) fails at once with the reason, and 30 s bound the whole.
    private func withClient<T: Sendable>(logger: Logger, _ body: @escaping @Sendable (PostgresConnection) async throws -> T)
        async throws(PgRoutingImportError) -> T
    {
        var configuration = PostgresConnection.Configuration(
            host: address.host, port: address.port, username: address.username, password: address.password, database: address.database,
            tls: .disable)
        configuration.options.connectTimeout = .seconds(5)
        let answer: T?
        do {
            answer = try await withDeadline(.seconds(30)) { [configuration] in
                let connection = try await PostgresConnection.connect(configuration: configuration, id: 1, logger: logger)
                do {
                    let result = try await body(connection)
                    try? await connection.close()
                    return result
                } catch {
                    try? await connection.close()
                    throw error
                }
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
