import Foundation

/// `RIDE_DATABASE_URL`, parsed: `postgres://USER[:PASSWORD]@HOST[:PORT][,HOST[:PORT]…]/DATABASE[?sslmode=…&target_session_attrs=…]`
/// (`postgresql://` too). Several hosts, as libpq takes them, are a primary and its standbys:
/// with `target_session_attrs=read-write` a service uses the one that takes writes and, when it is
/// lost, finds the one promoted in its place. Checked before anything connects, so a typo is named
/// at start (exit 64) rather than found as a connection failure.
public struct PostgresURL: Sendable, Equatable, CustomStringConvertible {
    public struct Host: Sendable, Equatable {
        public var name: String
        public var port: Int
        public init(_ name: String, port: Int = 5432) { (self.name, self.port) = (name, port) }
    }

    /// The servers, in the order they are tried; at least one.
    public var hosts: [Host]
    public var username: String
    public var password: String?
    public var database: String
    public var tls: TLSMode
    public var targetSessionAttrs: TargetSessionAttrs

    public enum TLSMode: String, Sendable, Equatable, CaseIterable {
        /// Plain TCP: the default, for a database on the same host or a private network.
        case disable
        /// TLS when the server offers it.
        case prefer
        /// TLS or no connection.
        case require
    }

    /// Which of the hosts a service may use (libpq's `target_session_attrs`).
    public enum TargetSessionAttrs: String, Sendable, Equatable, CaseIterable {
        /// The first that answers.
        case any
        /// Only one that takes writes (a primary, not a standby); `primary` is read the same.
        case readWrite = "read-write"
    }

    /// The first host.
    public var host: String {
        get { hosts[0].name }
        set { hosts[0].name = newValue }
    }
    public var port: Int {
        get { hosts[0].port }
        set { hosts[0].port = newValue }
    }

    public init(
        host: String, port: Int = 5432, username: String, password: String? = nil, database: String, tls: TLSMode = .disable,
        standbys: [Host] = [], targetSessionAttrs: TargetSessionAttrs = .any
    ) {
        (self.hosts, self.username, self.password, self.database, self.tls) = (
            [Host(host, port: port)] + standbys, username, password, database, tls
        )
        self.targetSessionAttrs = targetSessionAttrs
    }

    /// Parses `text`; the error says which part is wrong.
    public init(parsing text: String) throws(PostgresURLError) {
        // URLComponents takes one host: the list is read here, and the rest with the first host.
        var single = text
        var listed: [Host] = []
        if let schemeEnd = text.range(of: "://") {
            let rest = text[schemeEnd.upperBound...]
            let authority = rest.prefix { $0 != "/" && $0 != "?" }
            if let at = authority.lastIndex(of: "@"), authority[at...].contains(",") {
                let list = authority[authority.index(after: at)...]
                for entry in list.split(separator: ",", omittingEmptySubsequences: false) {
                    listed.append(try Self.host(String(entry), in: text))
                }
                single = String(text[..<list.startIndex]) + "\(listed[0].name):\(listed[0].port)" + String(text[list.endIndex...])
            }
        }
        guard let components = URLComponents(string: single), let scheme = components.scheme else {
            throw PostgresURLError("\"\(Self.redacted(text))\" is not a URL; expected postgres://USER:PASSWORD@HOST:PORT/DATABASE")
        }
        guard scheme == "postgres" || scheme == "postgresql" else {
            throw PostgresURLError(
                "scheme \"\(scheme)\" is not postgres:// (only PostgreSQL is supported; without the variable, SQLite files are used)")
        }
        guard let host = components.host, !host.isEmpty else {
            throw PostgresURLError("no host in \(Self.redacted(text)); expected postgres://USER@HOST/DATABASE")
        }
        guard let user = components.user, !user.isEmpty else {
            throw PostgresURLError("no user in \(Self.redacted(text)); expected postgres://USER@HOST/DATABASE")
        }
        let path = components.path.hasPrefix("/") ? String(components.path.dropFirst()) : components.path
        guard !path.isEmpty, !path.contains("/") else {
            throw PostgresURLError("no database name in \(Self.redacted(text)); expected …@HOST:PORT/DATABASE")
        }
        var tls = TLSMode.disable
        var attrs = TargetSessionAttrs.any
        for item in components.queryItems ?? [] {
            switch item.name {
            case "sslmode":
                guard let mode = item.value.flatMap(TLSMode.init(rawValue:)) else {
                    throw PostgresURLError(
                        "sslmode \"\(item.value ?? "")\" is not one of \(TLSMode.allCases.map(\.rawValue).joined(separator: ", "))")
                }
                tls = mode
            case "target_session_attrs":
                guard let value = item.value.map({ $0 == "primary" ? "read-write" : $0 }).flatMap(TargetSessionAttrs.init(rawValue:)) else {
                    throw PostgresURLError("target_session_attrs \"\(item.value ?? "")\" is not one of any, read-write, primary")
                }
                attrs = value
            default: throw PostgresURLError("unknown parameter \"\(item.name)\" (sslmode and target_session_attrs are understood)")
            }
        }
        // URLComponents accepts any number as a port; a port must fit TCP's 16 bits.
        if let port = components.port, !(1...65_535).contains(port) { throw PostgresURLError("port \(port) is not from 1 to 65535") }
        self.init(
            host: host, port: components.port ?? 5432, username: user, password: components.password, database: path, tls: tls,
            standbys: Array(listed.dropFirst()), targetSessionAttrs: attrs)
    }

    /// One `HOST[:PORT]` of a list.
    static func host(_ entry: String, in text: String) throws(PostgresURLError) -> Host {
        let parts = entry.split(separator: ":", omittingEmptySubsequences: false)
        guard let name = parts.first, !name.isEmpty, parts.count <= 2 else {
            throw PostgresURLError("host \"\(entry.prefix(100))\" in the list of \(redacted(text)) is not HOST or HOST:PORT")
        }
        guard parts.count == 2 else { return Host(String(name)) }
        guard let port = Int(parts[1]), (1...65_535).contains(port) else {
            throw PostgresURLError("port \"\(parts[1].prefix(20))\" of \(name) is not from 1 to 65535")
        }
        return Host(String(name), port: port)
    }

    /// The URL without its password: what logs and `--check` print.
    public var description: String {
        let hosts = hosts.map { "\($0.name):\($0.port)" }.joined(separator: ",")
        let attrs = targetSessionAttrs == .any ? "" : "&target_session_attrs=\(targetSessionAttrs.rawValue)"
        return "postgres://\(username)\(password == nil ? "" : ":***")@\(hosts)/\(database)?sslmode=\(tls.rawValue)\(attrs)"
    }

    /// `text` with its password as `***` (read by hand: a list of hosts is no URL to Foundation).
    static func redacted(_ text: String) -> String {
        guard let schemeEnd = text.range(of: "://") else { return text }
        let authority = text[schemeEnd.upperBound...].prefix { $0 != "/" && $0 != "?" }
        guard let at = authority.lastIndex(of: "@"), let colon = authority[..<at].firstIndex(of: ":") else { return text }
        return String(text[..<authority.index(after: colon)]) + "***" + String(text[at...])
    }
}

public struct PostgresURLError: Error, CustomStringConvertible, Equatable {
    public let message: String
    init(_ message: String) { self.message = message }
    public var description: String { message }
}
