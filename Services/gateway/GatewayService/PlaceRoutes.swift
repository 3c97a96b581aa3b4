import Geo
import Hummingbird
import Places
import Wire

/// `GET /v1/places/search` and `GET /v1/places/reverse`: streets, addresses and named places
/// from the OpenStreetMap extract (docs/places.md), what a taxi app asks a geocoder for.
///
/// The gateway answers them from an index it holds in memory rather than through a service on
/// the bus: the data is read-only, a few hundred kilobytes, loaded once, and a search takes well
/// under a millisecond — a hop through the broker would cost more than the search.
struct PlaceRoutes {
    /// The city's (`--city`); nil for a city without places, when the routes answer 503.
    let index: PlaceIndex?

    static let latitude = RouteDoc.Parameter(
        name: "latitude", schema: .number, rules: .init(minimum: -90, maximum: 90), required: false,
        description: "with longitude: rank the nearest first")
    static let longitude = RouteDoc.Parameter(
        name: "longitude", schema: .number, rules: .init(minimum: -180, maximum: 180), required: false, description: "with latitude")
    static let query = RouteDoc.Parameter(
        name: "q", schema: .string(), rules: .init(minLength: 1, maxLength: 100), required: true,
        description: "what the rider typed: a street, a street and house number, or a place's name; prefixes and typos match")
    static let limit = RouteDoc.Parameter(
        name: "limit", schema: .integer, rules: .init(minimum: 1, maximum: Double(PlaceIndex.maxLimit)), required: false,
        description: "at most this many (10 by default)")

    func register(on routes: RecordedRoutes) {
        routes.on(
            .get, "places/search",
            RouteDoc(
                "Search streets, addresses and places by name (autocomplete)", tag: .places,
                description: "Best match first (exact words, then prefixes, then typos), then nearest the point if one is given. "
                    + "A result's latitude, longitude and address are what a booking's pickup or dropoff takes. No match: an empty list.",
                query: [Self.query, Self.latitude, Self.longitude, Self.limit], reply: PlaceSearchReply.self, "the matches",
                fieldRules: "latitude and longitude come together")
        ) { [index] request, _ in
            let index = try Self.loaded(index)
            let text = try Self.string(Self.query, in: request)
            let near = try Self.point(in: request, required: false)
            let limit = try Self.limit.read(from: request)?.numberValue.map { Int($0) } ?? 10
            let found = index.search(text, near: near, limit: limit)
            return try JSONBody.response(PlaceSearchReply(places: found.map { PlaceResult($0.entry, distance: $0.distance) }))
        }
        routes.on(
            .get, "places/reverse",
            RouteDoc(
                "The address nearest a point (reverse geocoding)", tag: .places,
                description: "The nearest address within 100 m, else the nearest street within 500 m, with its distance in metres; "
                    + "404 no_address farther from the data (outside the area the places cover).",
                query: [Self.required(Self.latitude), Self.required(Self.longitude)], reply: PlaceResult.self,
                "the nearest address or street",
                errors: [404])
        ) { [index] request, _ in
            let index = try Self.loaded(index)
            guard let point = try Self.point(in: request, required: true), let found = index.reverse(point) else {
                throw GatewayError(
                    .notFound, "no_address",
                    "no address or street within \(Int(PlaceIndex.streetRadius)) m of that point (places cover \(index.area))")
            }
            return try JSONBody.response(PlaceResult(found.entry, distance: found.distance))
        }
    }

    static func loaded(_ index: PlaceIndex?) throws -> PlaceIndex {
        guard let index else {
            throw GatewayError(.serviceUnavailable, "places_unavailable", "this city has no places (its bundle was built without them)")
        }
        return index
    }

    private static func required(_ parameter: RouteDoc.Parameter) -> RouteDoc.Parameter {
        var parameter = parameter
        parameter.required = true
        parameter.description = nil
        return parameter
    }

    private static func string(_ parameter: RouteDoc.Parameter, in request: Request) throws -> String {
        guard case .string(let text)? = try parameter.read(from: request) else {
            throw GatewayError(.unprocessableContent, "invalid_params", "\(parameter.name): required")
        }
        do throws(WireViolation) {
            try parameter.rules.check(string: text, at: parameter.name)
        } catch {
            throw GatewayError(.unprocessableContent, "invalid_params", error.description)
        }
        return text
    }

    /// `latitude` and `longitude`, both or neither.
    private static func point(in request: Request, required: Bool) throws -> GeoPoint? {
        let latitude = try Self.latitude.read(from: request)?.numberValue
        let longitude = try Self.longitude.read(from: request)?.numberValue
        switch (latitude, longitude) {
        case (let latitude?, let longitude?): return GeoPoint(latitude: latitude, longitude: longitude)
        case (nil, nil) where !required: return nil
        case (nil, _): throw GatewayError(.unprocessableContent, "invalid_params", "latitude: required\(required ? "" : " with longitude")")
        case (_, nil): throw GatewayError(.unprocessableContent, "invalid_params", "longitude: required\(required ? "" : " with latitude")")
        }
    }
}
