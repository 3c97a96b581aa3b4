import Geo

/// What a place is: a named street, an address (a house number on a street) or a named place
/// (a shop, a station, a museum…).
public enum PlaceKind: String, Sendable, CaseIterable {
    case street, address, place
}

/// One searchable entry of the places file.
public struct PlaceEntry: Sendable, Hashable {
    public let kind: PlaceKind
    /// What the app shows first: the street's name, "Mannerheimintie 5", or the place's name.
    public let name: String
    /// The Swedish name where OpenStreetMap has one (Helsinki is bilingual); searchable too.
    public let alternateName: String?
    /// For a place, its OpenStreetMap tag (`amenity=restaurant`); nil for streets and addresses.
    public let category: String?
    /// A street's representative point (the middle of its longest way), an address's building.
    public let point: GeoPoint
    /// What a booking's `pickup.address` carries: "Mannerheimintie 5, Helsinki",
    /// "Stockmann, Aleksanterinkatu 52, Helsinki".
    public let address: String

    public init(kind: PlaceKind, name: String, alternateName: String?, category: String?, point: GeoPoint, address: String) {
        self.kind = kind
        self.name = name
        self.alternateName = alternateName
        self.category = category
        self.point = point
        self.address = address
    }
}

/// A search result: the entry, and its distance in metres from the point searched near (if any).
public struct PlaceMatch: Sendable, Hashable {
    public let entry: PlaceEntry
    public let distance: Double?
}

/// The answer of a reverse look-up: the nearest address (or street) and how far it is in metres.
public struct ReverseMatch: Sendable, Hashable {
    public let entry: PlaceEntry
    public let distance: Double
}
