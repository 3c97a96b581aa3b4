import BusModel
import Foundation
import Logging
import PostgresNIO
import Synchronization

/// A service's tables in a shared PostgreSQL database: the scale-out store (docs/design.md "Storage").
/// Each service keeps its tables in its own schema (`users`, `orders`, …), so one database holds
/// them all without clashing names and several instances of a service share the same tables.
/// Every connection of the pool starts with `search_path` set to that schema, so the statements
/// name tables exactly as on SQLite.
///
/// The pool's connections are driven by a task this object owns (`PostgresClient.run()`), started
/// on open and cancelled by `close()`. With several hosts (a primary and its standbys) the pool is
/// of the one in use, and is replaced by another's when that one is promoted (`+Failover`).
public final class PostgresSchema: Sendable {
    /// The pool of the server in use.
    public var client: PostgresClient { pool.withLock { $0.client } }
    public let schema: String
    public let url: PostgresURL
    /// The log of its queries and failovers, which its stores log to too.
    public let logger: Logger
    let maximumConnections: Int
    /// The server in use (an index into `url.hosts`), its pool and the task driving it.
    struct Pool {
        var client: PostgresClient
        var running: Task<Void, Never>
        var host: Int
        /// The calls under way on this pool, answered at once when it is replaced.
        let calls = AbandonedCalls()
    }
    let pool: Mutex<Pool>
    /// Whether the server answered the last probe. While it does not, reads and writes fail at
    /// once with 503 `storage_unavailable` instead of waiting for a connection: the pool would
    /// queue them for up to a minute (its circuit breaker), holding the caller and a worker.
    private let reachable = Atomic<Bool>(true)
    private let probing = Mutex<Task<Void, Never>?>(nil)
    /// The reads and writes under way, so that one that never returns is named in the log.
    let calls = StorageCalls()
    /// The calls under way on each connection, answered when it closes under them.
    let connections = ConnectionCalls()

    /// A schema step: statements run once, in one transaction, on databases that have not had it.
    /// Statements are separated by a `;` at the end of a line (the extended protocol takes one
    /// statement at a time).
    public typealias Migration = (name: String, sql: String)

    /// Connects (waiting up to `connectTimeout` for the server: in compose it may start after us),
    /// then applies `migrations` — under a lock, so instances starting together apply each once.
    /// - Parameter outbox: create the outbox table with the first migration.
    public static func open(
        url: PostgresURL, schema: String, migrations: [Migration], outbox: Bool, maximumConnections: Int = 10,
        connectTimeout: Duration = .seconds(30), callDeadline: Duration = .seconds(30), logger: Logger
    ) async throws -> PostgresSchema {
        let database = PostgresSchema(
            url: url, schema: schema, maximumConnections: maximumConnections, callDeadline: callDeadline, logger: logger)
        do {
            let probes = try url.hosts.indices.map { try Self.probeConfiguration(url, host: $0) }
            if url.hosts.count > 1 || url.targetSessionAttrs == .readWrite {
                try await database.useWritableHost(probes, within: connectTimeout)
            }
            try await database.waitUntilReachable(timeout: connectTimeout)
            try await database.migrate(migrations, outbox: outbox)
            database.startProbing(probes)
        } catch {
            database.close()
            throw error
        }
        return database
    }

    init(url: PostgresURL, schema: String, maximumConnections: Int, callDeadline: Duration = .seconds(30), logger: Logger) {
        precondition(schema.allSatisfy { $0.isLowercase || $0 == "_" }, "schema names are lowercase words")
        let client = Self.client(url: url, host: 0, schema: schema, maximumConnections: maximumConnections, logger: logger)
        pool = Mutex(Pool(client: client, running: Task { await client.run() }, host: 0))
        self.schema = schema
        self.url = url
        self.maximumConnections = maximumConnections
        self.callDeadline = callDeadline
        self.logger = logger
    }

    /// A pool of `url.hosts[host]`, every connection in `schema`.
    static func client(url: PostgresURL, host: Int, schema: String, maximumConnections: Int, logger: Logger) -> PostgresClient {
        var configuration = PostgresClient.Configuration(
            host: url.hosts[host].name, port: url.hosts[host].port, username: url.username, password: url.password, database: url.database,
            tls: Self.tls(url.tls))
        // A process lost mid-transaction with its host (no FIN or RST reaches the server) would hold
        // its row locks until TCP gives up, hours later; the server ends such a session after 5 s
        // idle in its transaction (ours last milliseconds), so whoever takes its work over can write.
        configuration.options.additionalStartupParameters = [
            ("search_path", schema), ("application_name", "ride-\(schema)"), ("idle_in_transaction_session_timeout", "5s"),
        ]
        configuration.options.maximumConnections = maximumConnections
        configuration.options.connectTimeout = .seconds(5)
        return PostgresClient(configuration: configuration, backgroundLogger: logger)
    }

    /// Probes the server every second on a connection of its own (not one of the pool's, which may
    /// all be busy), logging each change of state. The server counts as unreachable when the probe
    /// fails — refused, reset, closed — or has no answer for `probeDeadline`; a probe that is merely
    /// slow (a loaded machine, a busy server) changes nothing: flipping to "unreachable" on a slow
    /// answer refused every request of a service whose database was up.
    /// With several hosts, a server in use that is lost or no longer takes writes (a standby now)
    /// makes the probe look for the one that does, and the pool moves there.
    private func startProbing(_ configurations: [PostgresConnection.Configuration]) {
        let task = Task { [url, logger] in
            var connection: PostgresConnection?
            // When the host in use last answered; nil once it refused (silence after that is no slowness).
            var lastAnswered: ContinuousClock.Instant? = .now
            var probed = pool.withLock { $0.host }
            while !Task.isCancelled {
                try? await Task.sleep(for: .seconds(1))
                calls.reportSlow(logger: logger)
                let host = pool.withLock { $0.host }
                if host != probed {
                    try? await connection?.close()
                    (connection, probed) = (nil, host)
                }
                // With standbys, a host silent for `failoverProbeDeadline` is looked past (a lost host —
                // no reset, its packets dropped — would hold the move for the whole deadline); while no
                // other takes writes, it counts as lost only once silent for `probeDeadline`, as alone.
                let several = url.hosts.count > 1
                var outcome = await Self.probe(
                    connection, configuration: configurations[host], within: several ? Self.failoverProbeDeadline : Self.probeDeadline,
                    logger: logger)
                connection = outcome.connection
                if outcome.answered, !outcome.writable, url.targetSessionAttrs == .readWrite {
                    outcome = (false, false, connection, "\(url.hosts[host].name):\(url.hosts[host].port) takes no writes (a standby)")
                }
                if !outcome.answered, several, let other = await writableHost(configurations, excluding: host) {
                    use(host: other, because: outcome.failure ?? "")
                    outcome.answered = true
                }
                if outcome.answered {
                    lastAnswered = .now
                } else if outcome.failure?.hasPrefix(Self.noAnswer) != true {
                    lastAnswered = nil
                } else if several, let lastAnswered, .now - lastAnswered < Self.probeDeadline {
                    outcome.answered = true  // slow, not lost yet
                }
                if reachable.exchange(outcome.answered, ordering: .relaxed) != outcome.answered {
                    if outcome.answered {
                        logger.notice("database reachable again", metadata: ["database": "\(url)"])
                    } else {
                        logger.error(
                            "database not reachable; requests that need it are refused (503 storage_unavailable) until it is",
                            metadata: ["database": "\(url)", "error": "\(outcome.failure ?? "")"])
                    }
                }
            }
            try? await connection?.close()
        }
        probing.withLock { $0 = task }
    }

    /// How long a probe may go unanswered before the server counts as unreachable.
    static let probeDeadline = Duration.seconds(10)
    /// With standbys listed, how long before the others are asked whether one takes writes now.
    static let failoverProbeDeadline = Duration.seconds(2)
    static let noAnswer = "no answer within"

    /// One probe: `SELECT pg_is_in_recovery()` on `connection`, connecting first when there is none.
    /// Returns whether it was answered, whether the server takes writes (not a standby), and the
    /// connection for the next probe (nil once it failed: it is closed).
    /// The answer is given at the deadline even if the attempt ignores its cancellation (a connect
    /// or a query stuck on a dead socket): awaiting it instead would stop the probing for good.
    static func probe(
        _ connection: PostgresConnection?, configuration: PostgresConnection.Configuration, within limit: Duration,
        logger: Logger
    ) async -> (answered: Bool, writable: Bool, connection: PostgresConnection?, failure: String?) {
        let decided = FirstClaim()
        return await withCheckedContinuation { continuation in
            Task {
                // A connection the server has closed (a restart, a shutdown) is dropped before it is
                // used: a query on it was seen to wait for the deadline instead of failing.
                var current = connection?.isClosed == false ? connection : nil
                do {
                    if current == nil {
                        current = try await PostgresConnection.connect(configuration: configuration, id: 0, logger: logger)
                    }
                    var standby = false
                    for try await inRecovery in try await current!.query("SELECT pg_is_in_recovery()", logger: logger).decode(Bool.self) {
                        standby = inRecovery
                    }
                    if decided.claim() {
                        continuation.resume(returning: (true, !standby, current, nil))
                    } else {
                        try? await current?.close()
                    }
                } catch {
                    try? await current?.close()
                    let failure = (error as? PSQLError)?.summary ?? "\(error)"
                    if decided.claim() { continuation.resume(returning: (false, false, nil, failure)) }
                }
            }
            Task {
                try? await Task.sleep(for: limit)
                if decided.claim() {
                    try? await connection?.close()
                    continuation.resume(returning: (false, false, nil, "\(noAnswer) \(limit)"))
                }
            }
        }
    }

    /// The probe's connection to `url.hosts[host]`: its credentials, a short connect timeout.
    static func probeConfiguration(_ url: PostgresURL, host: Int = 0) throws -> PostgresConnection.Configuration {
        let tls: PostgresConnection.Configuration.TLS =
            switch url.tls {
            case .disable: .disable
            case .prefer: .prefer(try NIOSSLContext(configuration: .makeClientConfiguration()))
            case .require: .require(try NIOSSLContext(configuration: .makeClientConfiguration()))
            }
        var configuration = PostgresConnection.Configuration(
            host: url.hosts[host].name, port: url.hosts[host].port, username: url.username, password: url.password,
            database: url.database, tls: tls)
        configuration.options.connectTimeout = .seconds(5)
        return configuration
    }

    /// Whether the last probe was answered (for /health).
    public var isReachable: Bool { reachable.load(ordering: .relaxed) }

    static let unavailable = ServiceError(
        status: Status.unavailable, code: "storage_unavailable",
        message: "this service's database is not reachable; nothing was stored — try again later")

    /// A call the database did not answer within the deadline: unlike a refusal before it began,
    /// a change whose COMMIT was already on its way may have been stored.
    static let unanswered = ServiceError(
        status: Status.unavailable, code: "storage_unavailable",
        message:
            "this service's database did not answer in time; a change may or may not have been stored — try again (with the same Idempotency-Key)"
    )

    private static func tls(_ mode: PostgresURL.TLSMode) -> PostgresClient.Configuration.TLS {
        switch mode {
        case .disable: .disable
        case .prefer: .prefer(.makeClientConfiguration())
        case .require: .require(.makeClientConfiguration())
        }
    }

    /// Stops the pool's connections.
    public func close() {
        probing.withLock { $0?.cancel() }
        pool.withLock { $0.running.cancel() }
    }

    /// Runs `body` in a transaction: committed when it returns, rolled back when it throws.
    /// The error thrown is the one that stopped the transaction (the body's, BEGIN's or COMMIT's),
    /// as on SQLite, not postgres-nio's wrapper of all of them.
    @discardableResult
    public func write<Result: Sendable>(
        file: StaticString = #fileID, line: UInt = #line,
        _ body: @escaping @Sendable (PostgresConnection) async throws -> Result
    ) async throws -> Result {
        let logger = logger
        do {
            return try await bounded(site: "\(file):\(line)") { connection in
                try await connection.withTransaction(logger: logger) { connection in try await body(connection) }
            }
        } catch let error as PostgresTransactionError {
            throw error.closureError ?? error.beginError ?? error.commitError ?? error.rollbackError ?? error
        }
    }

    /// Runs `body` on one connection of the pool, outside a transaction (each statement sees the latest commits).
    public func read<Result: Sendable>(
        file: StaticString = #fileID, line: UInt = #line,
        _ body: @escaping @Sendable (PostgresConnection) async throws -> Result
    ) async throws -> Result {
        try await bounded(site: "\(file):\(line)", body)
    }

    /// How long one read or write may take, waiting for a connection included (30 s; tests shorten it).
    let callDeadline: Duration

    /// `body` on a pooled connection, answered within `callDeadline` whatever happens to it. Seen
    /// after a server restart under load: a query on a pooled connection that never got an answer
    /// (75 s and counting) — the outbox relay's and a chat write's — so orders published nothing
    /// more and every ride stopped. The caller gets 503 at the deadline and goes on (a relay or a
    /// reactor retries); the connection is closed so that the pool replaces it.
    private func bounded<Result: Sendable>(site: String, _ body: @escaping @Sendable (PostgresConnection) async throws -> Result)
        async throws -> Result
    {
        guard isReachable else { throw Self.unavailable }
        let call = calls.begin(site: site)
        defer { calls.end(call) }
        // Only a list of hosts replaces its pool: one host's calls skip the bookkeeping.
        let (client, abandoned) = pool.withLock { ($0.client, url.hosts.count > 1 ? $0.calls : nil) }
        let (calls, connections, logger) = (self.calls, self.connections, self.logger)
        let leased = Mutex<PostgresConnection?>(nil)
        let limit = callDeadline
        let connectionClosed = AbandonedCalls()
        let expired = Atomic(false)
        return try await withStorageDeadline(
            limit, abandoned: [abandoned, connectionClosed].compactMap { $0 },
            expired: {
                expired.store(true, ordering: .relaxed)
                logger.error("a database call had no answer within \(limit)", metadata: ["at": "\(site)"])
                if let stuck = leased.withLock({ $0 }) { Task { try? await stuck.close() } }
            }
        ) {
            try await client.withConnection { connection in
                try Self.ensureOpen(connection)
                let onConnection = connections.calls(on: connection)
                let registration = onConnection.register {
                    // Not when the deadline closed it: that call was answered and logged already.
                    guard !expired.load(ordering: .relaxed) else { return }
                    logger.warning("the database closed a call's connection under it; answered 503", metadata: ["at": "\(site)"])
                    connectionClosed.abandonAll()
                }
                defer { onConnection.forget(registration) }
                calls.leased(call)
                leased.withLock { $0 = connection }
                return try await body(connection)
            }
        }
    }

    /// A pooled connection the server has already closed (a restart) is refused before use: a
    /// query on such a connection was seen to wait forever instead of failing, and a reactor or a
    /// trip watcher waiting on it stops for good.
    static func ensureOpen(_ connection: PostgresConnection) throws {
        if connection.isClosed { throw unavailable }
    }

    private func waitUntilReachable(timeout: Duration) async throws {
        let deadline = ContinuousClock.now + timeout
        var announced = false
        while true {
            do {
                try await client.query("SELECT 1", logger: logger)
                return
            } catch let error as PSQLError where error.isUnreachable && ContinuousClock.now < deadline {
                if !announced {
                    logger.warning("database not reachable yet; waiting", metadata: ["database": "\(url)", "error": "\(error.summary)"])
                    announced = true
                }
                try await Task.sleep(for: .milliseconds(500))
            }
        }
    }

    private func migrate(_ migrations: [Migration], outbox: Bool) async throws {
        let (schema, logger) = (self.schema, self.logger)
        try await write { connection in
            // A service starting on a loaded machine can sit between two statements of its
            // migrations longer than the 5 s every other transaction gets.
            try await connection.query("SET LOCAL idle_in_transaction_session_timeout = '60s'", logger: logger)
            // One migrator at a time per schema, across every instance on this database.
            try await connection.query("SELECT pg_advisory_xact_lock(hashtext(\("ride.migrate." + schema)))", logger: logger)
            try await connection.query(PostgresQuery(unsafeSQL: "CREATE SCHEMA IF NOT EXISTS \(schema)"), logger: logger)
            try await connection.query("CREATE TABLE IF NOT EXISTS schema_migrations (name TEXT PRIMARY KEY NOT NULL)", logger: logger)
            var applied = Set<String>()
            for try await name in try await connection.query("SELECT name FROM schema_migrations", logger: logger).decode(String.self) {
                applied.insert(name)
            }
            for (index, migration) in migrations.enumerated() where !applied.contains(migration.name) {
                for statement in Self.statements(migration.sql) {
                    do {
                        try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
                    } catch let error as PSQLError {
                        throw MigrationFailed(schema: schema, migration: migration.name, statement: statement, error: error.summary)
                    }
                }
                if outbox, index == 0 {
                    for statement in Self.statements(PostgresOutbox.tableSQL) {
                        try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
                    }
                }
                try await connection.query("INSERT INTO schema_migrations (name) VALUES (\(migration.name))", logger: logger)
                logger.info("database migrated", metadata: ["schema": "\(schema)", "migration": "\(migration.name)"])
            }
        }
    }

    /// A service's SQLite migrations as PostgreSQL runs them: the schema is written once, in
    /// SQLite's dialect, and translated — `INTEGER` → `BIGINT` (SQLite's integers are 64-bit),
    /// `REAL` → `DOUBLE PRECISION`, `BLOB` → `BYTEA`, `WITHOUT ROWID` dropped (a PostgreSQL table
    /// has no rowid to drop). A statement PostgreSQL cannot take fails the migration at start.
    public static func translated(_ migrations: [ServiceDatabase.Migration]) -> [Migration] {
        migrations.map { migration in
            var sql = migration.sql
            for (sqlite, postgres) in [("INTEGER", "BIGINT"), ("REAL", "DOUBLE PRECISION"), ("BLOB", "BYTEA")] {
                sql = sql.replacingOccurrences(of: "\\b\(sqlite)\\b", with: postgres, options: .regularExpression)
            }
            sql = sql.replacingOccurrences(of: "\\)\\s*WITHOUT ROWID", with: ")", options: .regularExpression)
            return (migration.name, sql)
        }
    }

    /// The statements of a migration: split at each `;` outside a quoted string; `--` comments dropped.
    static func statements(_ sql: String) -> [String] {
        var statements: [String] = []
        var current = ""
        var quoted = false
        var comment = false
        var previous: Character = " "
        for character in sql {
            if comment {
                if character == "\n" {
                    comment = false
                    current.append(character)
                }
                continue
            }
            if !quoted, character == "-", previous == "-" {
                current.removeLast()
                comment = true
                continue
            }
            if character == "'" { quoted.toggle() }
            if character == ";", !quoted {
                statements.append(current)
                current = ""
            } else {
                current.append(character)
            }
            previous = character
        }
        statements.append(current)
        return statements.map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }.filter { !$0.isEmpty }
    }
}

/// A migration PostgreSQL refused: which one, the statement, and the server's message.
public struct MigrationFailed: Error, CustomStringConvertible {
    public let schema: String, migration: String, statement: String, error: String
    public var description: String { "migration \(migration) of schema \(schema) failed: \(error) — in: \(statement.prefix(300))" }
}

extension PostgresConnection {
    /// Every row of `query`, decoded as `Row` (a tuple of column types, or one type).
    public func all<each Column: PostgresDecodable & Sendable>(_ query: PostgresQuery, as _: (repeat each Column).Type, logger: Logger)
        async throws -> [(repeat each Column)]
    {
        var rows: [(repeat each Column)] = []
        for try await row in try await self.query(query, logger: logger).decode((repeat each Column).self) { rows.append(row) }
        return rows
    }

    /// The first row of `query`, or nil.
    public func first<each Column: PostgresDecodable & Sendable>(_ query: PostgresQuery, as _: (repeat each Column).Type, logger: Logger)
        async throws -> (repeat each Column)?
    {
        for try await row in try await self.query(query, logger: logger).decode((repeat each Column).self) { return row }
        return nil
    }

    /// Runs a statement; returns how many rows it returned. postgres-nio does not expose the
    /// command's row count, so a statement whose change count matters says `RETURNING 1`.
    @discardableResult
    public func run(_ query: PostgresQuery, logger: Logger) async throws -> Int {
        var count = 0
        for try await _ in try await self.query(query, logger: logger) { count += 1 }
        return count
    }
}

extension PSQLError {
    /// The server is down, restarting, or not reachable: worth waiting for.
    var isUnreachable: Bool {
        switch code {
        case .connectionError, .serverClosedConnection, .clientClosedConnection, .uncleanShutdown: return true
        case .server: return ["57P01", "57P02", "57P03", "08000", "08003", "08006"].contains(serverInfo?[.sqlState] ?? "")
        default: return false
        }
    }

    /// What went wrong, for a log line (the default description hides the server's message).
    public var summary: String {
        if let message = serverInfo?[.message] { return "\(serverInfo?[.sqlState] ?? "?"): \(message)" }
        return "\(code)"
    }
}

/// PostgreSQL's failures that are the database's state, not a bug, answered as such: the caller
/// may try again later, and nothing was stored (the transaction rolled back).
extension PSQLError: ServiceErrorConvertible {
    public var serviceError: ServiceError? {
        if isUnreachable || code == .poolClosed { return PostgresSchema.unavailable }
        switch serverInfo?[.sqlState] {
        case "53100":
            return ServiceError.storageFull
        case "22021", "22P05":
            // A NUL character in a text field: SQLite keeps it, PostgreSQL's text cannot. Bad input, not a failure.
            return ServiceError.unprocessable(
                "invalid_params", "a text field holds a character that cannot be stored (NUL); nothing was stored")
        case "40001", "40P01", "55P03", "53300":
            return ServiceError(
                status: Status.unavailable, code: "storage_busy",
                message: "this service's database is busy; nothing was stored — try again")
        default:
            return nil
        }
    }
}
