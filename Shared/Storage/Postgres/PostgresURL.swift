import Foundation

/// `RIDE_DATABASE_URL`, parsed: `postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE[?sslmode=disable|prefer|require]`
/// (`postgresql://` too). Checked before anything connects, so a typo is named at start (exit 64)
/// rather than found as a connection failure.
public struct PostgresURL: Sendable, Equatable, CustomStringConvertible {
    public var host: String
    public var port: Int
    public var username: String
    public var password: String?
    public var database: String
    public var tls: TLSMode

    public enum TLSMode: String, Sendable, Equatable, CaseIterable {
        /// Plain TCP: the default, for a database on the same host or a private network.
        case disable
        /// TLS when the server offers it.
        case prefer
        /// TLS or no connection.
        case require
    }

    public init(host: String, port: Int = 5432, username: String, password: String? = nil, database: String, tls: TLSMode = .disable) {
        (self.host, self.port, self.username, self.password, self.database, self.tls) = (host, port, username, password, database, tls)
    }

    /// Parses `text`; the error says which part is wrong.
    public init(parsing text: String) throws(PostgresURLError) {
        guard let components = URLComponents(string: text), let scheme = components.scheme else {
            throw PostgresURLError("\"\(text)\" is not a URL; expected postgres://USER:PASSWORD@HOST:PORT/DATABASE")
        }
        guard scheme == "postgres" || scheme == "postgresql" else {
            throw PostgresURLError("scheme \"\(scheme)\" is not postgres:// (only PostgreSQL is supported; without the variable, SQLite files are used)")
        }
        guard let host = components.host, !host.isEmpty else { throw PostgresURLError("no host in \(Self.redacted(text)); expected postgres://USER@HOST/DATABASE") }
        guard let user = components.user, !user.isEmpty else { throw PostgresURLError("no user in \(Self.redacted(text)); expected postgres://USER@HOST/DATABASE") }
        let path = components.path.hasPrefix("/") ? String(components.path.dropFirst()) : components.path
        guard !path.isEmpty, !path.contains("/") else { throw PostgresURLError("no database name in \(Self.redacted(text)); expected …@HOST:PORT/DATABASE") }
        var tls = TLSMode.disable
        for item in components.queryItems ?? [] {
            guard item.name == "sslmode" else { throw PostgresURLError("unknown parameter \"\(item.name)\" (only sslmode is understood)") }
            guard let mode = item.value.flatMap(TLSMode.init(rawValue:)) else {
                throw PostgresURLError("sslmode \"\(item.value ?? "")\" is not one of \(TLSMode.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            tls = mode
        }
        // URLComponents accepts any number as a port; a port must fit TCP's 16 bits.
        if let port = components.port, !(1...65_535).contains(port) { throw PostgresURLError("port \(port) is not from 1 to 65535") }
        self.init(host: host, port: components.port ?? 5432, username: user, password: components.password, database: path, tls: tls)
    }

    /// The URL without its password: what logs and `--check` print.
    public var description: String { "postgres://\(username)\(password == nil ? "" : ":***")@\(host):\(port)/\(database)?sslmode=\(tls.rawValue)" }

    static func redacted(_ text: String) -> String {
        guard var components = URLComponents(string: text), components.password != nil else { return text }
        components.password = "***"
        return components.string ?? text
    }
}

public struct PostgresURLError: Error, CustomStringConvertible, Equatable {
    public let message: String
    init(_ message: String) { self.message = message }
    public var description: String { message }
}
