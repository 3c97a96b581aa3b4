import Foundation
import PostgresNIO

/// Where a PostgreSQL database is, read from `postgres://user[:password]@host[:port]/database`
/// (`postgresql://` too). Only what the road servers need: TLS is off, as for a database on the
/// same host or network as the service.
public struct DatabaseAddress: Sendable, Equatable, CustomStringConvertible {
    public var host: String
    public var port: Int
    public var username: String
    public var password: String?
    public var database: String

    public init(host: String, port: Int = 5432, username: String, password: String? = nil, database: String) {
        (self.host, self.port, self.username, self.password, self.database) = (host, port, username, password, database)
    }

    /// Reads a URL; the error names the part that is missing or wrong.
    public init(parsing text: String) throws(RouteSettingError) {
        guard let components = URLComponents(string: text), let scheme = components.scheme, ["postgres", "postgresql"].contains(scheme)
        else {
            throw RouteSettingError("\(Self.redacted(text)) is not a postgres://user@host:port/database URL")
        }
        guard let host = components.host, !host.isEmpty else { throw RouteSettingError("\(Self.redacted(text)) names no host") }
        guard let username = components.user, !username.isEmpty else { throw RouteSettingError("\(Self.redacted(text)) names no user") }
        let database = String(components.path.drop { $0 == "/" })
        guard !database.isEmpty, !database.contains("/") else {
            throw RouteSettingError("\(Self.redacted(text)) names no database (…/database)")
        }
        let port = components.port ?? 5432
        guard (1...65535).contains(port) else { throw RouteSettingError("\(Self.redacted(text)) has port \(port), outside 1...65535") }
        self.init(host: host, port: port, username: username, password: components.password, database: database)
    }

    /// The URL with the password hidden, for logs and errors.
    public var description: String { "postgres://\(username)\(password == nil ? "" : ":***")@\(host):\(port)/\(database)" }

    /// The client's configuration: `timeout` bounds the connection attempt.
    func clientConfiguration(connectTimeout: Duration) -> PostgresClient.Configuration {
        var configuration = PostgresClient.Configuration(
            host: host, port: port, username: username, password: password, database: database, tls: .disable)
        configuration.options.connectTimeout = connectTimeout
        return configuration
    }

    /// `text` with any password replaced, so that an error never prints a secret.
    static func redacted(_ text: String) -> String {
        guard var components = URLComponents(string: text), components.password != nil else { return text }
        components.password = "***"
        return components.string ?? "the database URL"
    }
}
