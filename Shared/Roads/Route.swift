import Foundation
import Geo

/// A way from one point to another: the line to drive, how far and how long, and the stretches
/// it is made of (one per street, with its own timing) — what every route provider answers.
public struct Route: Sendable, Equatable {
    /// The line to drive, from the start to the end (at least two points).
    public var line: Polyline
    /// Metres along the line.
    public var distance: Double
    /// Seconds to drive it at the roads' speeds.
    public var duration: Double
    /// The stretches in order; their distances and durations add up to the route's.
    public var steps: [RouteStep]
    /// Where it came from: a road network, or the straight-line model when there was none to ask.
    public var kind: RouteKind

    public init(line: Polyline, distance: Double, duration: Double, steps: [RouteStep], kind: RouteKind) {
        self.line = line
        self.distance = distance
        self.duration = duration
        self.steps = steps
        self.kind = kind
    }
}

/// One stretch of a route along one street.
public struct RouteStep: Sendable, Equatable {
    /// The street's name, when the road data has one.
    public var name: String?
    public var distance: Double
    public var duration: Double
    /// The index in `Route.line.points` where the stretch begins.
    public var startIndex: Int

    public init(name: String?, distance: Double, duration: Double, startIndex: Int) {
        self.name = name
        self.distance = distance
        self.duration = duration
        self.startIndex = startIndex
    }
}

/// How an estimate was made: along roads, or the straight line times a road factor.
public enum RouteKind: String, Sendable, Equatable, Codable {
    case road
    case straightLine = "straight_line"
}

/// Why a provider has no route. Each names what was wrong, for the log and the caller.
public enum RouteError: Error, Equatable, CustomStringConvertible {
    /// A point is farther than the provider's snapping distance from any road it knows.
    case outsideRoadData(GeoPoint)
    /// Both points are on roads, but no drivable way joins them (a one-way trap, an island).
    case unroutable(from: GeoPoint, to: GeoPoint)
    /// The provider could not answer (a server down, slow, or answering garbage; a corrupt file).
    case unavailable(String)

    public var description: String {
        switch self {
        case .outsideRoadData(let point): "no road near \(point.latitude),\(point.longitude) in the road data"
        case .unroutable(let from, let to):
            "no drivable way from \(from.latitude),\(from.longitude) to \(to.latitude),\(to.longitude)"
        case .unavailable(let why): "the route provider is unavailable: \(why)"
        }
    }
}

/// Where routes come from. Implementations: `EmbeddedRoutes` (a road graph in process),
/// `PgRoutingRoutes` (PostgreSQL with pgRouting), `OSRMRoutes` (an OSRM-compatible server) and
/// `StraightLineRoutes` (no road data); `FallbackRoutes` puts the last behind any of the others.
public protocol RouteProvider: Sendable {
    /// The provider's name, for logs and metrics (`embedded`, `pgrouting`, `osrm`, `straight_line`).
    var name: String { get }
    func route(from start: GeoPoint, to end: GeoPoint) async throws(RouteError) -> Route
}
