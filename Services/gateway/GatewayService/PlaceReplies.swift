import Places
import Wire

/// What a place is, in a search result.
@WireModel
enum PlaceResultKind: String, Codable, Sendable {
    case street, address, place
}

/// One street, address or place: `latitude`, `longitude` and `address` are the booking's
/// `pickup` / `dropoff` as they are.
@WireModel
struct PlaceResult: Codable, Sendable, Equatable {
    var kind: PlaceResultKind
    /// "Mannerheimintie", "Mannerheimintie 10", "Stockmann".
    var name: String
    /// A place's OpenStreetMap tag, such as `amenity=restaurant`.
    var category: String?
    /// "Mannerheimintie 10, Helsinki".
    var address: String
    var latitude: Double
    var longitude: Double
    /// Metres from the point searched near or looked up.
    var distance: Double?

    init(_ entry: PlaceEntry, distance: Double?) {
        kind = PlaceResultKind(rawValue: entry.kind.rawValue) ?? .place
        name = entry.name
        category = entry.category
        address = entry.address
        latitude = entry.point.latitude
        longitude = entry.point.longitude
        self.distance = distance.map { ($0 * 10).rounded() / 10 }
    }
}

/// `GET /v1/places/search`.
@WireModel
struct PlaceSearchReply: Codable, Sendable, Equatable {
    var places: [PlaceResult]
}
