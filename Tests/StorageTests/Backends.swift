import Bus
import Foundation
import Logging
import Storage
import TestPostgres
import Testing

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

/// A PostgreSQL store: its pool, closed when a test ends.
protocol PostgresBacked { var postgres: PostgresSchema { get } }

/// A store on `backend` for `body`: in a temporary SQLite file, or in a fresh PostgreSQL database
/// (a `PostgresBacked` store's pool is closed when `body` ends).
func withBackend<Store>(
    _ backend: Backend, sqlite: (String) throws -> Store, postgres: (PostgresURL) async throws -> Store,
    _ body: (Store) async throws -> Void
) async throws {
    switch backend {
    case .sqlite:
        let file = TemporaryFile()
        try await body(try sqlite(file.path))
    case .postgres:
        let store = try await postgres(try await freshPostgres())
        defer { (store as? any PostgresBacked)?.postgres.close() }
        try await body(store)
    }
}

/// Runs a write again while it is refused `503 storage_unavailable` (it stored nothing: the probe
/// judged the server unreachable, as CI's load sometimes makes it), as a real caller would; up to five tries.
func writingAgainWhileUnavailable<T: Sendable>(_ write: () async throws -> T) async throws -> T {
    for attempt in 1... {
        do {
            return try await write()
        } catch let error as ServiceError where error.code == "storage_unavailable" && attempt < 5 {
            try await Task.sleep(for: .seconds(2))
        }
    }
    fatalError("unreachable")
}
