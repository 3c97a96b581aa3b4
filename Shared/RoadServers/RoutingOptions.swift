import ArgumentParser
import Foundation
import SettingsKit

/// `--routes` / `RIDE_ROUTES`: where a service's routes come from (`RouteSource`), for the
/// services that estimate along roads (trips, orders) — declared once here.
public struct RoutingOptions: ParsableArguments {
    /// `--routes`, declared once.
    public static let key = SettingKey(
        "routes", env: "RIDE_ROUTES", default: "embedded",
        "Where routes come from: embedded (the built-in road data of central Helsinki), straight (the straight line × 1.3), "
            + "pgrouting:postgres://user@host:port/db (after `ridectl roads import-pg`), osrm:http://host:5000; "
            + "a point off the road data gets the straight-line estimate")
    @Option(name: Self.key.name, help: Self.key.help)
    var routes: String?

    public init() {}

    /// The setting, checked: a bad value names the flag or variable it came from.
    public func source(environment: [String: String] = ProcessInfo.processInfo.environment) throws -> RouteSource {
        let setting = Self.key.resolve(routes, environment: environment)
        do {
            return try RouteSource(parsing: setting.value)
        } catch {
            throw ConfigurationError("routes (\(setting.origin)): \(error.message)")
        }
    }
}

extension RouteSource: CustomStringConvertible {
    /// As a configuration summary prints it (no password).
    public var description: String {
        switch self {
        case .embedded: "embedded (central Helsinki)"
        case .straight: "straight line × 1.3"
        case .pgRouting(let address): "pgrouting:\(address)"
        case .osrm(let base): "osrm:\(base.absoluteString)"
        }
    }
}
