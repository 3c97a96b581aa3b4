import Foundation
import Geo

/// Routes without road data: the straight line times `RouteModel`'s road factor, at its default
/// city speed. Never fails; every route it makes is `kind` `.straightLine`.
public struct StraightLineRoutes: RouteProvider {
    public let model: RouteModel
    public var name: String { "straight_line" }

    public init(model: RouteModel = RouteModel()) { self.model = model }

    public func route(from start: GeoPoint, to end: GeoPoint) async throws(RouteError) -> Route {
        line(from: start, to: end)
    }

    /// The same, synchronously (it asks nobody).
    public func line(from start: GeoPoint, to end: GeoPoint) -> Route {
        let distance = start.distance(to: end) * model.roadFactor
        let duration = distance / model.defaultSpeed
        return Route(
            line: Polyline(points: [start, end]), distance: distance, duration: duration,
            steps: [RouteStep(name: nil, distance: distance, duration: duration, startIndex: 0)], kind: .straightLine)
    }
}
