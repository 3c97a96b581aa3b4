import Geo
import Roads
import Testing

/// What every route provider must do, as test functions any provider's suite calls: the answers
/// of one provider can then be trusted wherever another's are.
enum RouteProviderConformance {
    /// Checks the route of each pair: a road route whose line starts and ends within
    /// `snapDistance` of the points, no shorter than the straight line between them, with a
    /// plausible speed and steps that add up to it.
    static func check(
        _ provider: any RouteProvider, pairs: [(from: GeoPoint, to: GeoPoint)], snapDistance: Double = 300, kind: RouteKind = .road,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async {
        for (start, end) in pairs {
            let route: Route
            do { route = try await provider.route(from: start, to: end) } catch {
                Issue.record("\(provider.name): no route from \(start) to \(end): \(error)", sourceLocation: sourceLocation)
                continue
            }
            checkShape(route, from: start, to: end, snapDistance: snapDistance, provider: provider.name, sourceLocation: sourceLocation)
            // The straight-line model's line is the crow's, its distance the road factor's.
            if kind == .road {
                #expect(
                    abs(route.line.length - route.distance) <= max(5, route.distance * 0.05),
                    "\(provider.name): line \(route.line.length) m ≠ \(route.distance) m",
                    sourceLocation: sourceLocation)
            }
            #expect(route.kind == kind, "\(provider.name): kind \(route.kind)", sourceLocation: sourceLocation)
        }
    }

    /// The checks of one route, for a route a test already has.
    static func checkShape(
        _ route: Route, from start: GeoPoint, to end: GeoPoint, snapDistance: Double, provider: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let trip = "\(provider) \(start.latitude),\(start.longitude) → \(end.latitude),\(end.longitude)"
        let points = route.line.points
        #expect(
            points.count >= 2 && points.allSatisfy(\.isValid), "\(trip): line of \(points.count) points", sourceLocation: sourceLocation)
        guard let first = points.first, let last = points.last else { return }
        #expect(
            first.distance(to: start) <= snapDistance, "\(trip): starts \(first.distance(to: start)) m away", sourceLocation: sourceLocation
        )
        #expect(last.distance(to: end) <= snapDistance, "\(trip): ends \(last.distance(to: end)) m away", sourceLocation: sourceLocation)
        // Snapping may move each end by up to snapDistance; between the line's own ends it is exact.
        let crow = start.distance(to: end)
        #expect(
            route.distance >= crow - 2 * snapDistance, "\(trip): \(route.distance) m, shorter than the straight \(crow) m",
            sourceLocation: sourceLocation)
        // 1% for the road data's own measure (PostGIS measures on the spheroid, Geo on a sphere).
        let ends = first.distance(to: last)
        #expect(
            route.distance >= ends - max(1, ends * 0.01), "\(trip): \(route.distance) m, shorter than between its own ends",
            sourceLocation: sourceLocation)
        #expect(route.duration.isFinite && route.duration >= 0, "\(trip): duration \(route.duration)", sourceLocation: sourceLocation)
        if route.distance > 50 {
            let speed = route.distance / route.duration
            #expect((1...60).contains(speed), "\(trip): \(speed) m/s", sourceLocation: sourceLocation)
        }
        checkSteps(route, trip: trip, sourceLocation: sourceLocation)
    }

    /// Steps in order along the line, adding up to the route's distance and duration.
    static func checkSteps(_ route: Route, trip: String, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(!route.steps.isEmpty, "\(trip): no steps", sourceLocation: sourceLocation)
        #expect(
            route.steps.first?.startIndex == 0, "\(trip): the first step starts at \(route.steps.first?.startIndex ?? -1)",
            sourceLocation: sourceLocation)
        let indices = route.steps.map(\.startIndex)
        #expect(
            indices == indices.sorted() && indices.allSatisfy { route.line.points.indices.contains($0) }, "\(trip): step starts \(indices)",
            sourceLocation: sourceLocation)
        let distance = route.steps.reduce(0) { $0 + $1.distance }
        let duration = route.steps.reduce(0) { $0 + $1.duration }
        #expect(
            abs(distance - route.distance) <= max(1, route.distance * 0.005), "\(trip): steps \(distance) m of \(route.distance)",
            sourceLocation: sourceLocation)
        #expect(
            abs(duration - route.duration) <= max(1, route.duration * 0.005), "\(trip): steps \(duration) s of \(route.duration)",
            sourceLocation: sourceLocation)
        #expect(route.steps.allSatisfy { $0.distance >= 0 && $0.duration >= 0 }, "\(trip): a negative step", sourceLocation: sourceLocation)
    }

    /// A point far from the provider's roads, as either end, is `.outsideRoadData` naming it.
    static func checkOutside(
        _ provider: any RouteProvider, inside: GeoPoint, outside: GeoPoint, sourceLocation: SourceLocation = #_sourceLocation
    ) async {
        for (start, end) in [(inside, outside), (outside, inside)] {
            do throws(RouteError) {
                let route = try await provider.route(from: start, to: end)
                Issue.record("\(provider.name): a route to a point off its roads: \(route.distance) m", sourceLocation: sourceLocation)
            } catch {
                #expect(error == .outsideRoadData(outside), "\(provider.name): \(error)", sourceLocation: sourceLocation)
            }
        }
    }

    /// Points that are not places (NaN, latitude 200) are refused, never crash.
    static func checkInvalid(_ provider: any RouteProvider, inside: GeoPoint, sourceLocation: SourceLocation = #_sourceLocation) async {
        for bad in [GeoPoint(latitude: .nan, longitude: 24.9), GeoPoint(latitude: 200, longitude: 24.9)] {
            do throws(RouteError) {
                _ = try await provider.route(from: inside, to: bad)
                Issue.record("\(provider.name): a route to \(bad)", sourceLocation: sourceLocation)
            } catch {
                if case .outsideRoadData = error {
                } else {
                    Issue.record("\(provider.name): \(error) for \(bad)", sourceLocation: sourceLocation)
                }
            }
        }
    }

    /// Two providers agree on each pair's distance within `tolerance` (0.05 = 5%).
    static func checkAgree(
        _ one: any RouteProvider, _ other: any RouteProvider, pairs: [(from: GeoPoint, to: GeoPoint)], tolerance: Double = 0.05,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        for (start, end) in pairs {
            let a = try await one.route(from: start, to: end)
            let b = try await other.route(from: start, to: end)
            #expect(
                abs(a.distance - b.distance) <= tolerance * max(a.distance, b.distance),
                "\(start) → \(end): \(one.name) \(Int(a.distance)) m, \(other.name) \(Int(b.distance)) m", sourceLocation: sourceLocation)
        }
    }
}
