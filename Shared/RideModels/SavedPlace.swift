import Foundation
import Wire

/// A place a user saved (AxRide's home, work and favourites), usable as a pickup or dropoff by id.
@WireModel
public struct SavedPlace: Codable, Sendable, Equatable {
    @WireModel
    public enum Label: String, Codable, Sendable, CaseIterable { case home, work, other }

    public var id: String
    public var userID: String
    /// `home` and `work`: one each per user (saving again replaces it); `other`: any number, named.
    public var label: Label
    public var name: String
    public var place: Place
    public var createdAt: Date

    public init(id: String, userID: String, label: Label, name: String, place: Place, createdAt: Date) {
        self.id = id
        self.userID = userID
        self.label = label
        self.name = name
        self.place = place
        self.createdAt = createdAt
    }
}

/// `users.save_place`.
@WireModel
public struct SavePlaceParams: Codable, Sendable, Equatable {
    public var userID: String
    public var label: SavedPlace.Label
    /// Required for `other`; `home`/`work` are named after their label when absent.
    @WireField(maxLength: 60, pattern: TextPatterns.line, meaning: TextPatterns.lineMeaning)
    public var name: String?
    public var place: Place

    public init(userID: String, label: SavedPlace.Label, name: String? = nil, place: Place) {
        self.userID = userID
        self.label = label
        self.name = name
        self.place = place
    }
}

/// `users.places` (a user's places) and `users.delete_place` (with `id`).
@WireModel
public struct PlacesParams: Codable, Sendable, Equatable {
    public var userID: String
    public var id: String?

    public init(userID: String, id: String? = nil) {
        self.userID = userID
        self.id = id
    }
}

@WireModel
public struct SavedPlaces: Codable, Sendable, Equatable {
    public var places: [SavedPlace]
    public init(places: [SavedPlace]) { self.places = places }
}
