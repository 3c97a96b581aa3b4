import GRDB

/// A service's own SQLite file, opened the same way everywhere: a pool (WAL, so reads never wait
/// for the writer), a 5 s busy timeout, `synchronous = NORMAL` (a commit survives a process crash;
/// only a power cut can lose the last ones), and the service's migrations applied in order.
public enum ServiceDatabase {
    /// A named schema step: SQL run once, in a transaction, on databases that have not had it.
    public typealias Migration = (name: String, sql: String)

    /// - Parameter outbox: create the `Outbox` table with the first migration.
    public static func open(
        path: String, migrations: [Migration], outbox: Bool,
        prepare: (@Sendable (Database) throws -> Void)? = nil
    ) throws -> DatabasePool {
        var configuration = Configuration()
        configuration.busyMode = .timeout(5)
        configuration.prepareDatabase { db in
            try db.execute(sql: "PRAGMA synchronous = NORMAL")
            try prepare?(db)
        }
        let pool = try DatabasePool(path: path, configuration: configuration)
        var migrator = DatabaseMigrator()
        for (index, migration) in migrations.enumerated() {
            migrator.registerMigration(migration.name) { db in
                try db.execute(sql: migration.sql)
                if outbox, index == 0 { try Outbox.createTable(db) }
            }
        }
        try migrator.migrate(pool)
        return pool
    }
}
