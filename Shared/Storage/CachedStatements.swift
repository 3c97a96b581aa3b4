import GRDB

extension Database {
    /// Runs `sql` through the connection's prepared-statement cache. The hot paths run the same
    /// few statements thousands of times a second; parsing each one every time was ~5% of
    /// ride-orders' CPU in `ridectl bench lifecycle`.
    public func run(_ sql: String, _ arguments: StatementArguments = []) throws {
        try cachedStatement(sql: sql).execute(arguments: arguments)
    }

    /// The first column of the first row of a cached statement (nil when there is no row or it is NULL).
    public func value<Value: DatabaseValueConvertible & StatementColumnConvertible>(
        _ type: Value.Type, _ sql: String,
        _ arguments: StatementArguments = []
    ) throws -> Value? {
        try Value.fetchOne(cachedStatement(sql: sql), arguments: arguments)
    }
}
