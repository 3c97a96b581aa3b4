import Foundation

/// `HOST:PORT` for an HTTP listener.
public struct HostPort: Sendable, Equatable, CustomStringConvertible {
    public var host: String
    public var port: Int

    public init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    public static func parse(_ setting: Setting, name: String) throws -> HostPort {
        let text = setting.value
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]), (0...65535).contains(port) else {
            throw ConfigurationError("\(name) (\(setting.origin)) '\(text)' must be HOST:PORT, e.g. 0.0.0.0:9100")
        }
        let host = String(text[..<colon])
        return HostPort(host: host.isEmpty ? "0.0.0.0" : host, port: port)
    }

    public var description: String { "\(host):\(port)" }
}
