import BusModel
import Foundation
import GRDB
import PostgresNIO

/// The `requests` table a service's migration creates with `RequestTable.sql`: the keyed requests
/// it answered (`RequestLog`), so a retry gets the first reply on any instance. A row without a
/// status is a claim: its first attempt is still running.
public enum RequestTable {
    public static let sql = """
        CREATE TABLE requests (
            scope TEXT NOT NULL,
            key TEXT NOT NULL,
            hash TEXT NOT NULL,
            status INTEGER,
            body TEXT,
            created_at_ms INTEGER NOT NULL,
            PRIMARY KEY (scope, key)
        );
        CREATE INDEX requests_by_age ON requests (created_at_ms);
        """

    static func milliseconds(_ date: Date) -> Int64 { Int64((date.timeIntervalSince1970 * 1000).rounded()) }

    /// What a stored row says of a claim that could not be inserted.
    static func claim(of key: RequestKey, hash: String, status: Int64?, body: String?) -> RequestClaim {
        guard hash == key.hash else { return .reused }
        guard let status else { return .running }
        return .replay(ServiceReply(status: Int(status), json: Array((body ?? "{}").utf8)))
    }

    /// (expired before, this key forgotten before, abandoned claim before) at `now`.
    static func cutoffs(_ now: Date, _ key: RequestKey) -> (expired: Int64, forgotten: Int64, abandoned: Int64) {
        (
            milliseconds(now.addingTimeInterval(-RequestKey.lifetime)),
            milliseconds(now.addingTimeInterval(-min(key.kept, RequestKey.lifetime))),
            milliseconds(now.addingTimeInterval(-RequestKey.lease))
        )
    }
}

/// `RequestLog` on a service's SQLite file.
public struct SQLiteRequestLog: RequestLog {
    public let database: DatabasePool

    public init(database: DatabasePool) { self.database = database }

    public func claim(_ key: RequestKey, now: Date) async throws -> RequestClaim {
        try await database.write { db in
            let (expired, forgotten, abandoned) = RequestTable.cutoffs(now, key)
            try db.run("DELETE FROM requests WHERE created_at_ms < ?", [expired])
            try db.run(
                "DELETE FROM requests WHERE scope = ? AND key = ? AND ((status IS NOT NULL AND created_at_ms < ?) OR (status IS NULL AND created_at_ms < ?))",
                [key.scope, key.key, forgotten, abandoned])
            try db.run(
                "INSERT INTO requests (scope, key, hash, created_at_ms) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING",
                [key.scope, key.key, key.hash, RequestTable.milliseconds(now)])
            if db.changesCount == 1 { return .first }
            let row = try Row.fetchOne(
                db, sql: "SELECT hash, status, body FROM requests WHERE scope = ? AND key = ?", arguments: [key.scope, key.key])
            guard let row else { return .first }
            return RequestTable.claim(of: key, hash: row["hash"], status: row["status"], body: row["body"])
        }
    }

    public func finish(_ key: RequestKey, reply: ServiceReply) async throws {
        try await database.write { db in
            try db.run(
                "UPDATE requests SET status = ?, body = ? WHERE scope = ? AND key = ?",
                [reply.status, String(decoding: reply.json, as: UTF8.self), key.scope, key.key])
        }
    }

    public func release(_ key: RequestKey) async throws {
        try await database.write { db in
            try db.run("DELETE FROM requests WHERE scope = ? AND key = ? AND status IS NULL", [key.scope, key.key])
        }
    }
}

/// `RequestLog` in a service's PostgreSQL schema; an insert racing another instance's waits for
/// its transaction and then sees its row.
public struct PostgresRequestLog: RequestLog {
    public let postgres: PostgresSchema

    public init(postgres: PostgresSchema) { self.postgres = postgres }

    public func claim(_ key: RequestKey, now: Date) async throws -> RequestClaim {
        let logger = postgres.logger
        return try await postgres.write { connection in
            let (expired, forgotten, abandoned) = RequestTable.cutoffs(now, key)
            try await connection.run("DELETE FROM requests WHERE created_at_ms < \(expired)", logger: logger)
            try await connection.run(
                """
                DELETE FROM requests WHERE scope = \(key.scope) AND key = \(key.key)
                AND ((status IS NOT NULL AND created_at_ms < \(forgotten)) OR (status IS NULL AND created_at_ms < \(abandoned)))
                """, logger: logger)
            let inserted = try await connection.run(
                """
                INSERT INTO requests (scope, key, hash, created_at_ms) VALUES (\(key.scope), \(key.key), \(key.hash), \(RequestTable.milliseconds(now)))
                ON CONFLICT DO NOTHING RETURNING 1
                """, logger: logger)
            if inserted == 1 { return .first }
            let row = try await connection.first(
                "SELECT hash, status, body FROM requests WHERE scope = \(key.scope) AND key = \(key.key)",
                as: (String, Int64?, String?).self, logger: logger)
            guard let row else { return .first }
            return RequestTable.claim(of: key, hash: row.0, status: row.1, body: row.2)
        }
    }

    public func finish(_ key: RequestKey, reply: ServiceReply) async throws {
        let logger = postgres.logger
        let (status, body) = (Int64(reply.status), String(decoding: reply.json, as: UTF8.self))
        try await postgres.write { connection in
            try await connection.run(
                "UPDATE requests SET status = \(status), body = \(body) WHERE scope = \(key.scope) AND key = \(key.key)", logger: logger)
        }
    }

    public func release(_ key: RequestKey) async throws {
        let logger = postgres.logger
        try await postgres.write { connection in
            try await connection.run(
                "DELETE FROM requests WHERE scope = \(key.scope) AND key = \(key.key) AND status IS NULL", logger: logger)
        }
    }
}
