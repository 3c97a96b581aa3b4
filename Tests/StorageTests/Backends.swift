import Foundation
import Logging
import Storage
import Testing
import TestPostgres

/// The two databases every store runs on; each storage test runs on both.
enum Backend: String, CaseIterable, CustomTestStringConvertible {
    case sqlite, postgres
    var testDescription: String { rawValue }
}

let testLogger = Logger(label: "storage-tests")

/// A SQLite file path of its own, removed (with its WAL files) when the test ends.
final class TemporaryFile: Sendable {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("storage-\(UUID().uuidString).sqlite").path
    deinit {
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
    }
}

/// A fresh, empty PostgreSQL database (on the tests' own server) for one test.
func freshPostgres() async throws -> PostgresURL {
    try await TestPostgresServer.newDatabase()
}
