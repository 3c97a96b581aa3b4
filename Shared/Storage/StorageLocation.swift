/// Where a service keeps its state: a SQLite file in its data directory (the default: nothing to
/// install, one instance per data directory and machine) or its schema in a shared PostgreSQL
/// database (`RIDE_DATABASE_URL`: several instances, on several machines).
public enum StorageLocation: Sendable, Equatable, CustomStringConvertible {
    case sqlite(path: String)
    case postgres(PostgresURL)

    public var description: String {
        switch self {
        case .sqlite(let path): "SQLite \(path)"
        case .postgres(let url): "PostgreSQL \(url)"
        }
    }
}
