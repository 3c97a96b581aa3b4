import Foundation
import Geo
import Logging

/// A provider with the straight-line model behind it: when the provider has no route (a point
/// off its roads, no way between them, the provider down), the answer is the straight-line route
/// (`kind` `.straightLine`) and a warning is logged — an estimate is never missing.
public struct FallbackRoutes: RouteProvider {
    public let primary: any RouteProvider
    public let fallback: StraightLineRoutes
    let logger: Logger

    public var name: String { primary.name }

    public init(_ primary: any RouteProvider, fallback: StraightLineRoutes = StraightLineRoutes(), logger: Logger) {
        self.primary = primary
        self.fallback = fallback
        self.logger = logger
    }

    public func route(from start: GeoPoint, to end: GeoPoint) async throws(RouteError) -> Route {
        do {
            return try await primary.route(from: start, to: end)
        } catch {
            logger.warning(
                "no road route; the straight-line estimate instead", metadata: ["provider": "\(primary.name)", "error": "\(error)"])
            return fallback.line(from: start, to: end)
        }
    }
}
