import GRDB

/// Where a reactor keeps, per source, the sequence up to which every event has been handled.
public protocol ReactorCursors: Sendable {
    /// The last sequence of `source` handled in full (0 at first).
    func reactorCursor(source: String) async throws -> UInt64
    func saveReactorCursor(source: String, sequence: UInt64) async throws
}

/// A store whose database has the `reactor_cursors` table: the two methods come with it.
public protocol DatabaseReactorCursors: ReactorCursors {
    var database: DatabasePool { get }
}

extension DatabaseReactorCursors {
    public func reactorCursor(source: String) async throws -> UInt64 { try await ReactorCursorTable.cursor(database, source: source) }
    public func saveReactorCursor(source: String, sequence: UInt64) async throws {
        try await ReactorCursorTable.save(database, source: source, sequence: sequence)
    }
}

/// The `reactor_cursors` table a service's migration creates with `ReactorCursorTable.sql`.
public enum ReactorCursorTable {
    public static let sql = "CREATE TABLE reactor_cursors (source TEXT PRIMARY KEY NOT NULL, sequence INTEGER NOT NULL);"

    public static func cursor(_ database: some DatabaseReader, source: String) async throws -> UInt64 {
        try await database.read { db in
            UInt64(try db.value(Int64.self, "SELECT sequence FROM reactor_cursors WHERE source = ?", [source]) ?? 0)
        }
    }

    public static func save(_ database: some DatabaseWriter, source: String, sequence: UInt64) async throws {
        try await database.write { db in
            try db.run(
                "INSERT INTO reactor_cursors (source, sequence) VALUES (?, ?) ON CONFLICT (source) DO UPDATE SET sequence = excluded.sequence",
                [source, Int64(sequence)])
        }
    }
}
