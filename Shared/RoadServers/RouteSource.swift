import Foundation
import Logging
import Roads

/// Where a service's routes come from: the route-provider setting, parsed.
///
/// `embedded` (the road graph in process), `straight` (the straight-line model only),
/// `pgrouting:postgres://user@host:port/db` (PostgreSQL with pgRouting) or
/// `osrm:http://host:5000` (an OSRM server).
public enum RouteSource: Sendable, Equatable {
    case embedded
    case straight
    case pgRouting(DatabaseAddress)
    case osrm(URL)

    /// Reads the setting; the error names the bad value and lists the good ones.
    public init(parsing text: String) throws(RouteSettingError) {
        let value = text.trimmingCharacters(in: .whitespaces)
        switch value {
        case "embedded": self = .embedded
        case "straight": self = .straight
        case _ where value.hasPrefix("pgrouting:"):
            self = .pgRouting(try DatabaseAddress(parsing: String(value.dropFirst("pgrouting:".count))))
        case _ where value.hasPrefix("osrm:"):
            let base = String(value.dropFirst("osrm:".count))
            guard let url = URL(string: base), let scheme = url.scheme, ["http", "https"].contains(scheme), let host = url.host,
                !host.isEmpty
            else {
                throw RouteSettingError(
                    "osrm:\(base): the OSRM server must be an http:// or https:// URL with a host, as in osrm:http://host:5000")
            }
            self = .osrm(url)
        default:
            throw RouteSettingError(
                "route provider \"\(DatabaseAddress.redacted(value))\" is none of embedded, straight, pgrouting:postgres://user@host:port/db, osrm:http://host:5000"
            )
        }
    }

    /// The provider this source names, behind `FallbackRoutes` (the straight-line estimate when it
    /// has no route). `embedded` makes the in-process provider; only it is asked for.
    public func makeProvider(embedded: () throws -> any RouteProvider, logger: Logger) throws -> any RouteProvider {
        let primary: any RouteProvider =
            switch self {
            case .embedded: try embedded()
            case .straight: StraightLineRoutes()
            case .pgRouting(let address): PgRoutingRoutes(address: address, logger: logger)
            case .osrm(let base): OSRMRoutes(base: base, logger: logger)
            }
        return FallbackRoutes(primary, logger: logger)
    }
}

/// Reads the route-provider setting (`RouteSource(parsing:)` under the name services look for).
public enum RouteSettings {
    public static func parse(_ text: String) throws(RouteSettingError) -> RouteSource { try RouteSource(parsing: text) }
}

/// A route-provider setting that cannot be used; the message names the value and what is wrong.
public struct RouteSettingError: Error, Equatable, CustomStringConvertible {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
