import Geo
import Roads
import Testing

/// Routing on the built-in central Helsinki graph, and on small graphs made for one property.
@Suite struct EmbeddedRoutesTests {
    static let routes = Result { try EmbeddedRoutes.helsinki() }

    /// Places in the extract (about 60.164–60.179 N, 24.935–24.953 E), far enough apart that a
    /// route has some blocks to choose from.
    static let pairs: [(String, GeoPoint, GeoPoint)] = [
        ("Stockmann → Senate Square", GeoPoint(latitude: 60.1686, longitude: 24.9420), GeoPoint(latitude: 60.1693, longitude: 24.9520)),
        ("Erottaja → Kaisaniemi", GeoPoint(latitude: 60.1660, longitude: 24.9430), GeoPoint(latitude: 60.1745, longitude: 24.9470)),
        ("Kluuvi → Kaivopuisto side", GeoPoint(latitude: 60.1715, longitude: 24.9480), GeoPoint(latitude: 60.1650, longitude: 24.9500)),
        ("Kruununhaka → Kamppi side", GeoPoint(latitude: 60.1735, longitude: 24.9520), GeoPoint(latitude: 60.1680, longitude: 24.9380)),
    ]

    @Test func theBuiltInGraphLoads() throws {
        let graph = try RoadGraph.helsinki()
        #expect(
            graph.points.count > 1000 && graph.edges.count > graph.points.count, "\(graph.points.count) nodes, \(graph.edges.count) edges")
        #expect(graph.names.contains("Mannerheimintie") && graph.names.contains("Pohjoisesplanadi"), "\(graph.names)")
        #expect(graph.points.allSatisfy { (60.16...60.18).contains($0.latitude) && (24.93...24.96).contains($0.longitude) })
        #expect(try EmbeddedRoutes.helsinki().name == "embedded")
    }

    @Test(arguments: pairs.indices) func knownPairsGiveSaneRoutes(_ index: Int) async throws {
        let (label, start, end) = Self.pairs[index]
        let routes = try Self.routes.get()
        let route = try await routes.route(from: start, to: end)
        let line = route.line.points
        let straight = try #require(line.first).distance(to: try #require(line.last))
        #expect(route.kind == .road)
        #expect(
            route.distance >= straight - 0.5 && route.distance <= 2.2 * straight,
            "\(label): \(route.distance) m against \(straight) m straight")
        #expect(abs(route.line.length - route.distance) < 0.01 * route.distance + 1, "\(label): the line is as long as the route")
        // Speeds in the data are 20–60 km/h.
        let speed = route.distance / route.duration * 3.6
        #expect((15...61).contains(speed), "\(label): \(speed) km/h")
        #expect(abs(route.steps.map(\.distance).reduce(0, +) - route.distance) < 0.01, "\(label)")
        #expect(abs(route.steps.map(\.duration).reduce(0, +) - route.duration) < 0.01, "\(label)")
        #expect(route.steps.first?.startIndex == 0 && route.steps.map(\.startIndex) == route.steps.map(\.startIndex).sorted())
        #expect(
            zip(route.steps, route.steps.dropFirst()).allSatisfy { $0.name != $1.name }, "\(label): consecutive steps are different streets"
        )
        #expect(route.steps.contains { $0.name != nil }, "\(label): \(route.steps)")
        #expect(line.first!.distance(to: start) < 300 && line.last!.distance(to: end) < 300)
    }

    /// A one-way edge of the data: driving it forwards is the stretch itself; backwards goes round.
    @Test func aOneWayStreetIsRespected() async throws {
        let routes = try Self.routes.get()
        let graph = routes.graph
        let oneWay = try #require(
            graph.edges.filter { edge in edge.length > 60 && !graph.edges(from: Int(edge.to)).contains { graph.edges[$0].to == edge.from } }
                .max { $0.length < $1.length })
        let (from, to) = (graph.points[Int(oneWay.from)], graph.points[Int(oneWay.to)])
        let a = GeoPoint(
            latitude: from.latitude + (to.latitude - from.latitude) * 0.3, longitude: from.longitude + (to.longitude - from.longitude) * 0.3
        )
        let b = GeoPoint(
            latitude: from.latitude + (to.latitude - from.latitude) * 0.7, longitude: from.longitude + (to.longitude - from.longitude) * 0.7
        )
        let along = try await routes.route(from: a, to: b)
        let against = try await routes.route(from: b, to: a)
        let street = graph.name(of: oneWay) ?? "an unnamed road"
        #expect(abs(along.distance - 0.4 * oneWay.length) < 1, "along \(street): \(along.distance) m of \(oneWay.length) m")
        #expect(along.line.points.count == 2)
        #expect(against.distance > along.distance + 20, "against \(street): \(against.distance) m, a way round")
    }

    @Test func pointsFarOutsideTheDataAreOutsideRoadData() async throws {
        let routes = try Self.routes.get()
        let tampere = GeoPoint(latitude: 61.4978, longitude: 23.7610)
        let inside = Self.pairs[0].1
        await #expect(throws: RouteError.outsideRoadData(tampere)) { try await routes.route(from: tampere, to: inside) }
        await #expect(throws: RouteError.outsideRoadData(tampere)) { try await routes.route(from: inside, to: tampere) }
        // 0.01° north of the extract's edge: about 1 km from any road.
        let north = GeoPoint(latitude: 60.19, longitude: 24.945)
        await #expect(throws: RouteError.outsideRoadData(north)) { try await routes.route(from: north, to: inside) }
        // NaN is equal to nothing, so the case is matched by hand.
        let invalid = GeoPoint(latitude: .nan, longitude: 24.94)
        #expect(throws: RouteError.self) { try routes.shortestRoute(from: invalid, to: inside) }
        #expect(Self.isOutside { try routes.shortestRoute(from: invalid, to: inside) }, "an invalid point is outside the road data")
    }

    @Test func theSamePointTwiceIsAnEmptyRoadRoute() throws {
        let routes = try Self.routes.get()
        let route = try routes.shortestRoute(from: Self.pairs[0].1, to: Self.pairs[0].1)
        #expect(route.distance == 0 && route.duration == 0 && route.line.points.count == 2 && route.steps.count == 1)
    }

    /// Two one-way roads, a → b and c → d, 1 km apart: each end is on a road, no way joins them.
    @Test func noWayBetweenRoadsIsUnroutable() async throws {
        let points = [
            GeoPoint(latitude: 60.0, longitude: 25.0), GeoPoint(latitude: 60.001, longitude: 25.0),
            GeoPoint(latitude: 60.01, longitude: 25.0), GeoPoint(latitude: 60.011, longitude: 25.0),
        ]
        let edges = [
            RoadGraph.Edge(from: 0, to: 1, length: 111, speed: 36, name: 0),
            RoadGraph.Edge(from: 2, to: 3, length: 111, speed: 36, name: nil),
        ]
        let routes = EmbeddedRoutes(graph: try RoadGraph(points: points, edges: edges, names: ["Testikatu"]))
        let start = GeoPoint(latitude: 60.0002, longitude: 25.0)
        let end = GeoPoint(latitude: 60.0102, longitude: 25.0)
        await #expect(throws: RouteError.unroutable(from: start, to: end)) { try await routes.route(from: start, to: end) }
        // Along the one-way road: 0.6 of 111 m at 10 m/s; against it: no way.
        let along = try await routes.route(from: start, to: GeoPoint(latitude: 60.0008, longitude: 25.0))
        #expect(abs(along.distance - 66.6) < 0.5 && abs(along.duration - 6.66) < 0.05 && along.steps.map(\.name) == ["Testikatu"])
        await #expect(throws: RouteError.self) { try await routes.route(from: GeoPoint(latitude: 60.0008, longitude: 25.0), to: start) }
    }

    /// The route's line runs snapped start → nodes → snapped end, its steps one per street.
    @Test func stepsGroupEdgesByStreet() throws {
        let points = (0..<4).map { GeoPoint(latitude: 60.0 + Double($0) * 0.001, longitude: 25.0) }
        let edges = [
            RoadGraph.Edge(from: 0, to: 1, length: 111.2, speed: 36, name: 0),
            RoadGraph.Edge(from: 1, to: 2, length: 111.2, speed: 36, name: 0),
            RoadGraph.Edge(from: 2, to: 3, length: 111.2, speed: 72, name: 1),
        ]
        let routes = EmbeddedRoutes(graph: try RoadGraph(points: points, edges: edges, names: ["Ykkoskatu", "Kakkoskatu"]))
        let route = try routes.shortestRoute(
            from: GeoPoint(latitude: 60.0005, longitude: 25.0), to: GeoPoint(latitude: 60.0025, longitude: 25.0))
        #expect(route.line.points.count == 4)
        #expect(route.steps.map(\.name) == ["Ykkoskatu", "Kakkoskatu"] && route.steps.map(\.startIndex) == [0, 2])
        #expect(abs(route.steps[0].distance - 166.8) < 0.5 && abs(route.steps[1].duration - 2.78) < 0.05, "\(route.steps)")
    }

    /// Random points in the extract's box: those near a road (the bay and the parks are not) always
    /// route, the graph being one strongly connected component, and the route is no shorter than
    /// the straight line.
    @Test func randomPairsNearRoadsAlwaysRoute() throws {
        let routes = try Self.routes.get()
        var random = Xorshift(seed: 23)
        var (routed, outside) = (0, 0)
        for _ in 0..<500 {
            let start = GeoPoint(latitude: random.next(in: 60.1645...60.1785), longitude: random.next(in: 24.936...24.952))
            let end = GeoPoint(latitude: random.next(in: 60.1645...60.1785), longitude: random.next(in: 24.936...24.952))
            if Self.isOutside({ try routes.shortestRoute(from: start, to: end) }) {
                outside += 1
                continue
            }
            let route = try routes.shortestRoute(from: start, to: end)
            routed += 1
            #expect(route.line.points.count >= 2 && route.duration >= 0 && route.distance >= 0)
            #expect(route.distance + 0.5 >= route.line.points.first!.distance(to: route.line.points.last!))
        }
        #expect(routed > 400, "\(routed) routed, \(outside) outside the road data")
    }
}

extension EmbeddedRoutesTests {
    /// Whether routing fails with `.outsideRoadData` (matched by case: a NaN point equals nothing).
    static func isOutside(_ route: () throws -> Route) -> Bool {
        do {
            _ = try route()
            return false
        } catch {
            if case .outsideRoadData = error as? RouteError { return true }
            return false
        }
    }
}

/// A seeded xorshift64*, so the random cases replay the same on every machine.
struct Xorshift {
    private var state: UInt64

    init(seed: UInt64) { state = seed | 1 }

    mutating func next() -> UInt64 {
        state ^= state >> 12
        state ^= state << 25
        state ^= state >> 27
        return state &* 0x2545_F491_4F6C_DD1D
    }

    mutating func next(in range: ClosedRange<Double>) -> Double {
        range.lowerBound + Double(next() >> 11) / Double(1 << 53) * (range.upperBound - range.lowerBound)
    }
}

extension EmbeddedRoutesTests {
    /// A snapping distance of any size is a bound, not a loop count: infinite reaches the nearest road.
    @Test func anyDistanceSnapsOrRefusesQuickly() throws {
        let graph = try RoadGraph.helsinki()
        let far = GeoPoint(latitude: -33.86, longitude: 151.21)
        let inside = Self.pairs[0].1
        for distance in [.infinity, 1e300] {
            #expect(try EmbeddedRoutes(graph: graph, snappingDistance: distance).shortestRoute(from: far, to: inside).kind == .road)
        }
        for distance in [-1, 0, .nan] {
            let routes = EmbeddedRoutes(graph: graph, snappingDistance: distance)
            #expect(throws: RouteError.self) { try routes.shortestRoute(from: GeoPoint(latitude: 60.19, longitude: 24.945), to: far) }
        }
    }
}
