import ArgumentParser
import Foundation
import ServiceKit
import SettingsKit
import Storage

/// `--database-url` / `RIDE_DATABASE_URL`, for the services that can keep their state in PostgreSQL.
public struct DatabaseOptions: ParsableArguments, Sendable {
    /// `--database-url`, declared once.
    public static let key = SettingKey(
        "database-url", env: "RIDE_DATABASE_URL",
        "PostgreSQL to keep state in, shared by instances: postgres://USER:PASSWORD@HOST:PORT[,STANDBY:PORT…]/DATABASE[?sslmode=disable|prefer|require&target_session_attrs=read-write]; unset: a SQLite file in --data-dir. RIDE_DATABASE_URL_FILE names a file holding it (a mounted secret)"
    )
    @Option(name: Self.key.name, help: Self.key.help) var databaseURL: String?

    public init() {}

    /// PostgreSQL when a URL is given (a malformed one is a `ConfigurationError` naming the part), else `sqlitePath`.
    public func location(sqlitePath: String, environment: [String: String] = ProcessInfo.processInfo.environment) throws -> StorageLocation
    {
        let setting = try Self.key.resolveSecret(databaseURL, environment: environment)
        guard !setting.value.isEmpty else { return .sqlite(path: sqlitePath) }
        do {
            return .postgres(try PostgresURL(parsing: setting.value))
        } catch {
            throw ConfigurationError("\(setting.origin): \(error.message)")
        }
    }
}

extension StorageLocation {
    /// The database password, held to `--mode` like every secret (none for SQLite, or a URL without one).
    public var secrets: [SecretSetting] {
        guard case .postgres(let url) = self, let password = url.password else { return [] }
        return [
            SecretSetting(
                name: "database password", origin: "in --database-url, RIDE_DATABASE_URL or its _FILE", value: Array(password.utf8),
                minimumLength: 16)
        ]
    }
}
