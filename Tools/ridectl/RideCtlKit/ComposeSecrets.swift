import Foundation
import ServiceKit
import SettingsKit
import Wire

/// The secrets docker-compose.yml mounts from one folder: the CURVE keys (`curve/`, a key
/// directory) and a random value per file below, each made once and kept after. The compose file
/// runs in production mode, which refuses the development values this repository ships.
struct ComposeSecrets {
    /// The database the compose file's `postgres` service makes: its host name, user and database.
    struct Database {
        var host = "postgres"
        var user = "ride"
        var name = "ridesharing"
    }

    static let tokenSecret = "token-secret"
    static let notificationsKey = "notifications-key"
    static let gatewaySecretKey = "gateway-secret-key"
    static let postgresPassword = "postgres-password"
    static let databaseURL = "database-url"
    static let curveKeys = "curve"

    let folder: String

    /// Makes what is missing; answers the names it made.
    func make(database: Database = Database()) throws -> [String] {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        var made: [String] = []
        if !exists(Self.curveKeys + "/server.pub") {
            try CurveKeyDirectory.create(at: path(Self.curveKeys))
            made.append(Self.curveKeys + "/")
        }
        for name in [Self.tokenSecret, Self.notificationsKey, Self.gatewaySecretKey] where !exists(name) {
            try write(Self.randomValue(), to: name)
            made.append(name)
        }
        // The URL holds the password, so the two are made together.
        if !exists(Self.postgresPassword) || !exists(Self.databaseURL) {
            let password = Self.randomValue()
            try write(password, to: Self.postgresPassword)
            try write("postgres://\(database.user):\(password)@\(database.host):5432/\(database.name)", to: Self.databaseURL)
            made += [Self.postgresPassword, Self.databaseURL]
        }
        return made
    }

    /// 32 random bytes in URL-safe base64 (43 characters): fits a URL's password as it is.
    static func randomValue() -> String {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) }
        return Base64URL.encode(Data(bytes))
    }

    private func path(_ name: String) -> String { "\(folder)/\(name)" }
    private func exists(_ name: String) -> Bool { FileManager.default.fileExists(atPath: path(name)) }

    private func write(_ value: String, to name: String) throws {
        guard
            FileManager.default.createFile(atPath: path(name), contents: Data((value + "\n").utf8), attributes: [.posixPermissions: 0o600])
        else {
            throw ConfigurationError("cannot write \(path(name))")
        }
    }
}
