import Foundation
import Wire

/// `city.json`, a city bundle's table of contents: its name, the extract it was built from, and
/// its files (relative to the bundle, no `..`).
@WireKeys
public struct CityManifest: Codable, Sendable, Equatable {
    public static let fileName = "city.json"
    public static let currentFormat = "ride-city 1"
    public static let roadsFile = "roads.graph"
    public static let placesFile = "places.tsv"
    public static let hierarchyFile = "hierarchy.bin"
    /// Every file a bundle may hold: what `ridectl city build` may replace.
    public static let bundleFiles: Set<String> = [fileName, roadsFile, placesFile, hierarchyFile, "ATTRIBUTION.md"]

    public var format: String = Self.currentFormat
    public var name: String
    /// The extract (file name and what it is), or how a synthetic city was made.
    public var source: String
    public var sourceSHA256: String?
    public var roads: String
    public var places: String?
    /// The road graph's contraction hierarchy, made with the bundle (a metropolitan graph's).
    public var hierarchy: String?

    public init(name: String, source: String, sourceSHA256: String? = nil, roads: String, places: String?, hierarchy: String? = nil) {
        self.name = name
        self.source = source
        self.sourceSHA256 = sourceSHA256
        self.roads = roads
        self.places = places
        self.hierarchy = hierarchy
    }

    /// The manifest at `path`, checked: format, name, plain file names.
    public static func read(_ path: String) throws(CityBundleError) -> CityManifest {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw CityBundleError("\(path): cannot be read (\(error.localizedDescription))")
        }
        let manifest: CityManifest
        do {
            manifest = try JSONDecoder().decode(CityManifest.self, from: data)
        } catch {
            throw CityBundleError("\(path): not a city manifest (\(error))")
        }
        guard manifest.format == currentFormat else {
            throw CityBundleError("\(path): format '\(manifest.format.prefix(40))', this build reads '\(currentFormat)'")
        }
        guard (1...100).contains(manifest.name.count) else { throw CityBundleError("\(path): name must be 1 to 100 characters") }
        for file in [manifest.roads] + [manifest.places, manifest.hierarchy].compactMap({ $0 }) where !isPlainFileName(file) {
            throw CityBundleError("\(path): '\(file.prefix(80))' is not a file name inside the bundle")
        }
        return manifest
    }

    /// A name inside the bundle directory: no path separators, not `.` or `..`.
    static func isPlainFileName(_ name: String) -> Bool {
        !name.isEmpty && name.count <= 100 && !name.contains("/") && !name.contains("\\") && name != "." && name != ".."
    }

    /// The manifest as `ridectl city build` writes it: sorted keys, one line per key.
    public func encoded() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(self)
    }
}
