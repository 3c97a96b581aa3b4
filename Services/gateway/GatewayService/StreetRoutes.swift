import Geo
import Hummingbird
import Roads
import Wire

/// `GET /v1/streets`: the streets around a point as lines (GeoJSON `MultiLineString`), from the
/// city's road data (`--city`) — what the share page and the dashboard draw their maps on, without tiles
/// from elsewhere. Public (the share page has no token): it is OpenStreetMap's data; the streets
/// are found by grid cell (`StreetGrid`), not by reading the whole graph, and each address's
/// reads count as share reads (`--address-share-reads-per-min`).
struct StreetRoutes {
    /// The city's; outside its data the layout is empty.
    let streets: StreetGrid
    let limits: RateLimits

    static let latitude = RouteDoc.Parameter(
        name: "latitude", schema: .number, rules: .init(minimum: -90, maximum: 90), required: true, description: nil)
    static let longitude = RouteDoc.Parameter(
        name: "longitude", schema: .number, rules: .init(minimum: -180, maximum: 180), required: true, description: nil)
    static let radius = RouteDoc.Parameter(
        name: "radius", schema: .number, rules: .init(minimum: 50, maximum: 5000), required: false,
        description: "metres around the point (1 000 by default)")

    func register(on routes: RecordedRoutes) {
        var doc = RouteDoc(
            "The streets around a point, as lines to draw a map on", tag: .places,
            description: "Each street segment of the city's road data with an end within the radius, once (a two-way street is one line); "
                + "empty outside the area the data covers (docs/roads.md).",
            query: [Self.latitude, Self.longitude, Self.radius], reply: StreetLayout.self, "the streets", errors: [429])
        doc.callsServices = false
        let (limits, streets) = (self.limits, self.streets)
        routes.on(.get, "streets", doc) { request, context in
            try limits.admitShareRead(request, context)
            guard let latitude = try Self.latitude.read(from: request)?.numberValue,
                let longitude = try Self.longitude.read(from: request)?.numberValue
            else {
                throw GatewayError(.unprocessableContent, "invalid_params", "latitude and longitude: required")
            }
            let radius = try Self.radius.read(from: request)?.numberValue ?? 1000
            let lines = streets.segments(around: GeoPoint(latitude: latitude, longitude: longitude), radius: radius)
            return try JSONBody.response(StreetLayout(coordinates: lines.map { [$0.0.coordinates, $0.1.coordinates] }))
        }
    }
}

/// `GET /v1/streets`: GeoJSON `MultiLineString`, `[longitude, latitude]` positions.
@WireModel
struct StreetLayout: Codable, Sendable, Equatable {
    var type: String = "MultiLineString"
    var coordinates: [[[Double]]]

    init(coordinates: [[[Double]]]) { self.coordinates = coordinates }
}
