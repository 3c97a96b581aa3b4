import GRDB

/// A service's own SQLite file, opened the same way everywhere: a pool (WAL, so reads never wait
/// for the writer), a 5 s busy timeout, `synchronous = NORMAL` (a commit survives a process crash;
/// only a power cut can lose the last ones), and the service's migrations applied.
public enum ServiceDatabase {
    public static func open(path: String, migrator: DatabaseMigrator,
                            prepare: (@Sendable (Database) throws -> Void)? = nil) throws -> DatabasePool {
        var configuration = Configuration()
        configuration.busyMode = .timeout(5)
        configuration.prepareDatabase { db in
            try db.execute(sql: "PRAGMA synchronous = NORMAL")
            try prepare?(db)
        }
        let pool = try DatabasePool(path: path, configuration: configuration)
        try migrator.migrate(pool)
        return pool
    }
}
