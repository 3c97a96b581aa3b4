import ArgumentParser
import Foundation
import SettingsKit
import Synchronization

/// `--city` / `RIDE_CITY`: the city a process routes, draws and searches in — declared once here,
/// for every executable that needs one (trips, orders, the gateway, `ridectl simulate`).
public struct CityOptions: ParsableArguments {
    /// `--city`, declared once.
    public static let key = SettingKey(
        "city", env: "RIDE_CITY", default: CitySetting.builtIn,
        "A city bundle directory (`ridectl city build EXTRACT.osm.pbf`, docs/cities.md): its roads, street map and places; "
            + "built-in (central Helsinki) when unset")
    @Option(name: Self.key.name, help: Self.key.help)
    var city: String?

    public init() {}

    /// The setting, its manifest read and checked (the graph and places are read by `load()`, where
    /// they are needed): a bad one names the flag or variable it came from and the file.
    public func setting(environment: [String: String] = ProcessInfo.processInfo.environment) throws -> CitySetting {
        let setting = Self.key.resolve(city, environment: environment)
        let city = CitySetting(path: setting.value == CitySetting.builtIn ? nil : setting.value, origin: setting.origin)
        if let path = city.path {
            do {
                _ = try CityManifest.read(URL(fileURLWithPath: path).appendingPathComponent(CityManifest.fileName).path)
            } catch {
                throw ConfigurationError("city (\(city.origin)): \(error.description)")
            }
        }
        return city
    }
}

/// Which city a process runs in: the built-in one or a bundle directory.
public struct CitySetting: Sendable, Equatable, CustomStringConvertible {
    static let builtIn = "built-in"
    /// Nil: built-in Helsinki.
    public var path: String?
    /// `--city`, `RIDE_CITY` or `default`.
    public var origin: String

    public init(path: String?, origin: String = "default") {
        self.path = path
        self.origin = origin
    }

    public var description: String { path ?? "built-in (central Helsinki)" }

    /// The bundle, loaded once per process and path; a bad one names the setting and the file.
    public func load() throws -> CityBundle {
        do {
            return try Self.loaded.bundle(path ?? Self.builtIn) { () throws(CityBundleError) in
                if let path { return try CityBundle.load(directory: path) }
                return try CityBundle.builtIn()
            }
        } catch {
            throw ConfigurationError("city (\(origin)): \(error.description)")
        }
    }

    private static let loaded = CityCache()
}

/// The bundles this process has loaded, by setting.
final class CityCache: Sendable {
    private let bundles = Mutex<[String: CityBundle]>([:])

    func bundle(_ key: String, load: () throws(CityBundleError) -> CityBundle) throws(CityBundleError) -> CityBundle {
        if let known = bundles.withLock({ $0[key] }) { return known }
        let bundle = try load()
        bundles.withLock { $0[key] = bundle }
        return bundle
    }
}
