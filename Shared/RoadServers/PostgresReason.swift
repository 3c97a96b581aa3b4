import PostgresNIO

/// What went wrong with PostgreSQL, in one line: the server's own message when it sent one (a
/// `PSQLError` prints only a generic text, so that queries' values never reach a log by accident).
func postgresReason(_ error: any Error) -> String {
    guard let error = error as? PSQLError else { return "\(error)" }
    if let message = error.serverInfo?[.message] { return "PostgreSQL: \(message)" }
    return "PostgreSQL: \(error.code)\(error.underlying.map { " (\($0))" } ?? "")"
}

/// Whether PostgreSQL said a table, column or function is missing: a database without the
/// import (`ways`, `routable`) or without PostGIS and pgRouting.
func isMissingRoadData(_ error: any Error) -> Bool {
    guard let state = (error as? PSQLError)?.serverInfo?[.sqlState] else { return false }
    return ["42P01", "42703", "42883"].contains(state)
}
