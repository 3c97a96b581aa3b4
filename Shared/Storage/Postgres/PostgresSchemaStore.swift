import Logging

/// A store kept in one schema of a PostgreSQL database: `open` connects, migrates the schema and
/// makes the store, which logs where its schema does.
public protocol PostgresSchemaStore: Sendable {
    /// The schema it is kept in unless told another (`orders`).
    static var defaultSchema: String { get }
    static var migrations: [PostgresSchema.Migration] { get }
    /// Whether the schema has an outbox of events (`OutboxRelay` publishes them).
    static var keepsOutbox: Bool { get }
    var postgres: PostgresSchema { get }
    init(postgres: PostgresSchema)
    /// Reads what the store starts from, once it is open (nothing, unless the store says).
    func prepare() async throws
}

extension PostgresSchemaStore {
    public var logger: Logger { postgres.logger }

    public func prepare() async throws {}

    public static func open(url: PostgresURL, schema: String = defaultSchema, logger: Logger) async throws -> Self {
        let store = Self(
            postgres: try await PostgresSchema.open(url: url, schema: schema, migrations: migrations, outbox: keepsOutbox, logger: logger))
        try await store.prepare()
        return store
    }
}
