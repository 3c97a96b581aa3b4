import Cities
import Foundation
import Geo
import Testing

@testable import Roads

/// City bundles as the services load them: the built-in city, a bundle written to a directory, and
/// every way a bundle can be wrong, each refused naming the file and the problem.
@Suite struct CityBundleTests {
    static func folder() throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("city-test-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    static func write(_ text: String, to path: String) throws { try Data(text.utf8).write(to: URL(fileURLWithPath: path)) }

    static func manifest(roads: String = "roads.graph", places: String? = nil, format: String = "ride-city 1") -> String {
        #"{"format":"\#(format)","name":"Test","source":"unit test","roads":"\#(roads)""# + (places.map { #","places":"\#($0)""# } ?? "")
            + "}"
    }

    func problem(_ directory: String) -> String {
        do {
            _ = try CityBundle.load(directory: directory)
            return "loaded"
        } catch {
            return error.description
        }
    }

    @Test func theBuiltInCityIsCentralHelsinkiWithItsPlacesRoutedByAStar() throws {
        let city = try CityBundle.builtIn()
        #expect(city.manifest.name == "Helsinki" && city.roads.edges.count == 1939 && city.places != nil && city.routes.hierarchy == nil)
        #expect(city.summary.hasPrefix("Helsinki: 1283 nodes, 1939 edges") && city.summary.contains("places"))
    }

    @Test func aGraphWrittenInSwiftLoadsAsTheSameGraph() throws {
        let helsinki = try RoadGraph.helsinki()
        let again = try RoadGraph(decoding: helsinki.encoded())
        #expect(again.points == helsinki.points && again.edges == helsinki.edges && again.names == helsinki.names)
        let synthetic = try RoadGraph.syntheticCity(edges: 3_000, seed: 4)
        let decoded = try RoadGraph(decoding: synthetic.encoded())
        #expect(decoded.edges.count == synthetic.edges.count && decoded.names == synthetic.names)
        #expect(zip(decoded.points, synthetic.points).allSatisfy { $0.distance(to: $1) < 0.02 }, "positions kept to 1e-7°")
    }

    @Test func aMetropolitanBundleIsRoutedOnItsHierarchyAndHasNoPlaces() throws {
        let directory = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let graph = try RoadGraph.syntheticCity(edges: CityBundle.hierarchyThreshold + 1_000, seed: 2)
        try Data(graph.encoded()).write(to: URL(fileURLWithPath: "\(directory)/roads.graph"))
        try Self.write(Self.manifest(), to: "\(directory)/city.json")
        let city = try CityBundle.load(directory: directory)
        #expect(city.manifest.name == "Test" && city.places == nil && city.origin == directory)
        let hierarchy = try #require(city.routes.hierarchy)
        #expect(hierarchy.shortcutCount > 0 && city.summary.contains("shortcuts") && city.summary.hasSuffix("no places"))
        let route = try city.routes.shortestRoute(from: graph.points[0], to: graph.points[graph.points.count - 1])
        #expect(route.kind == .road && route.distance > 0)
    }

    @Test func aBundlesHierarchyIsReadNotMadeAgainAndOneForAnotherGraphOrDamagedIsRefused() throws {
        let directory = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // As a bundle holds it: positions and lengths rounded as the file keeps them.
        let graph = try RoadGraph(decoding: RoadGraph.syntheticCity(edges: 6_000, seed: 5).encoded())
        let bytes = graph.encoded()
        try Data(bytes).write(to: URL(fileURLWithPath: "\(directory)/roads.graph"))
        let hierarchy = ContractionHierarchy(graph: graph)
        let file = hierarchy.encoded(graphChecksum: RoadGraph.checksum(ofFile: bytes) ?? 0)
        try Data(file).write(to: URL(fileURLWithPath: "\(directory)/hierarchy.bin"))
        try Self.write(
            #"{"format":"ride-city 1","name":"Test","source":"unit test","roads":"roads.graph","hierarchy":"hierarchy.bin"}"#,
            to: "\(directory)/city.json")
        let city = try CityBundle.load(directory: directory)
        #expect(
            city.routes.hierarchy?.shortcutCount == hierarchy.shortcutCount, "the bundle's own, though the graph is under the threshold")
        let aStar = EmbeddedRoutes(graph: graph)
        for (start, end) in [(graph.points[0], graph.points[graph.points.count - 1]), (graph.points[17], graph.points[901])] {
            #expect(
                abs(try city.routes.shortestRoute(from: start, to: end).duration - aStar.shortestRoute(from: start, to: end).duration)
                    < 1e-6)
        }
        // Damaged: the checksum says so.
        var damaged = file
        damaged[damaged.count - 3] ^= 0x40
        try Data(damaged).write(to: URL(fileURLWithPath: "\(directory)/hierarchy.bin"))
        #expect(problem(directory).contains("hierarchy.bin") && problem(directory).contains("checksum"), "\(problem(directory))")
        // Made for another graph.
        let other = try RoadGraph.syntheticCity(edges: 6_000, seed: 6)
        try Data(ContractionHierarchy(graph: other).encoded(graphChecksum: RoadGraph.checksum(ofFile: other.encoded()) ?? 0)).write(
            to: URL(fileURLWithPath: "\(directory)/hierarchy.bin"))
        #expect(problem(directory).contains("made for another graph"), "\(problem(directory))")
        // Not a hierarchy at all.
        try Data(bytes).write(to: URL(fileURLWithPath: "\(directory)/hierarchy.bin"))
        #expect(problem(directory).contains("hierarchy.bin"), "\(problem(directory))")
    }

    /// A hierarchy file whose checksum is right but whose content lies: a chain of shortcuts each
    /// twice the last (unpacking one would take 2^40 edges), or an arc between nodes its edge does
    /// not join. Refused before any search runs.
    @Test func aCraftedHierarchyIsRefusedBeforeItIsSearched() throws {
        let graph = try RoadGraph(decoding: RoadGraph.syntheticCity(edges: 2_000, seed: 8).encoded())
        let checksum = RoadGraph.checksum(ofFile: graph.encoded()) ?? 0
        let edges = graph.edges.count
        let there = graph.edges[0]
        let back = try #require(graph.edges.firstIndex { $0.from == there.to && $0.to == there.from })
        let empty = [[ContractionHierarchy.Arc]](repeating: [], count: graph.points.count)
        func refusal(_ hierarchy: ContractionHierarchy) -> String {
            do {
                _ = try ContractionHierarchy(decoding: hierarchy.encoded(graphChecksum: checksum), for: graph, graphChecksum: checksum)
                return "accepted"
            } catch {
                return "\(error)"
            }
        }
        // There and back (a loop), then that loop twice, four times, … 2^40 times.
        let first = [Int32(0)] + (0..<40).map { Int32(edges + $0) }
        let second = [Int32(back)] + (0..<40).map { Int32(edges + $0) }
        let doubling = ContractionHierarchy(originalEdges: edges, firstHalf: first, secondHalf: second, up: empty, down: empty)
        #expect(refusal(doubling).contains("more edges than the graph has nodes"), "\(refusal(doubling))")
        let apart = ContractionHierarchy(originalEdges: edges, firstHalf: [0], secondHalf: [0], up: empty, down: empty)
        #expect(refusal(apart).contains("halves do not meet"), "\(refusal(apart))")
        var up = empty
        up[Int(there.to)] = [ContractionHierarchy.Arc(node: there.from, seconds: 1, id: 0)]
        let lying = ContractionHierarchy(originalEdges: edges, firstHalf: [], secondHalf: [], up: up, down: empty)
        #expect(refusal(lying).contains("up arc 0 says"), "\(refusal(lying))")
        #expect(refusal(ContractionHierarchy(graph: graph)) == "accepted")
    }

    @Test func aBrokenBundleIsRefusedNamingTheFileAndTheProblem() throws {
        let directory = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        #expect(problem("\(directory)/nowhere").contains("no such directory"))
        #expect(problem(directory).contains("city.json: cannot be read"))
        try Self.write("{not json", to: "\(directory)/city.json")
        #expect(problem(directory).contains("city.json: not a city manifest"))
        try Self.write(Self.manifest(format: "ride-city 9"), to: "\(directory)/city.json")
        #expect(problem(directory).contains("this build reads 'ride-city 1'"))
        for escape in ["../roads.graph", "/etc/passwd", "..", ""] {
            try Self.write(Self.manifest(roads: escape), to: "\(directory)/city.json")
            #expect(problem(directory).contains("is not a file name inside the bundle"), "\(escape)")
        }
        try Self.write(Self.manifest(places: "places.tsv"), to: "\(directory)/city.json")
        #expect(problem(directory).contains("roads.graph"), "the graph is missing")
        var bytes = try RoadGraph.helsinki().encoded()
        bytes[bytes.count / 2] ^= 0xFF
        try Data(bytes).write(to: URL(fileURLWithPath: "\(directory)/roads.graph"))
        #expect(problem(directory).contains("roads.graph") && problem(directory).contains("checksum"), "\(problem(directory))")
        try Data(try RoadGraph.helsinki().encoded()).write(to: URL(fileURLWithPath: "\(directory)/roads.graph"))
        try Self.write("ride-places 1\narea X\ncount 1\nfnv1a64 0000000000000000\n\nS\t1\t2\tx\t\t\t\t\n", to: "\(directory)/places.tsv")
        #expect(problem(directory).contains("places.tsv") && problem(directory).contains("checksum"), "\(problem(directory))")
        try Self.write(Self.manifest(), to: "\(directory)/city.json")
        #expect(problem(directory) == "loaded", "a bundle without places loads")
    }

    @Test func theSettingNamesWhereABadCityCameFrom() throws {
        let options = try CityOptions.parse(["--city", "/no/such/city"])
        #expect(throws: (any Error).self) { try options.setting(environment: [:]) }
        do {
            _ = try CityOptions.parse([]).setting(environment: ["RIDE_CITY": "/no/such/city"])
            Issue.record("a missing bundle was accepted")
        } catch {
            #expect("\(error)".contains("city (RIDE_CITY)") && "\(error)".contains("/no/such/city/city.json"), "\(error)")
        }
        #expect(try CityOptions.parse([]).setting(environment: [:]) == CitySetting(path: nil, origin: "default"))
    }
}
