import Foundation
import Geo

/// Streets, addresses and named places of one area, searchable by name and by position: what a
/// taxi app gets from a geocoder (docs/places.md). Immutable once loaded, so one index serves
/// every request concurrently.
public struct PlaceIndex: Sendable {
    /// At most this many results from a search.
    public static let maxLimit = 50
    /// Words of a query past this many are ignored: each costs a look-up, and eight words name any place here.
    public static let maxWords = 8
    /// The reverse look-up takes an address this close, else the nearest street this close.
    public static let addressRadius = 100.0
    public static let streetRadius = 500.0
    /// A place without an address of its own takes the address this close (its building's).
    public static let placeAddressRadius = 30.0

    public let area: String
    public let entries: [PlaceEntry]
    private let words: TokenIndex
    private let addresses: SpatialGrid<Int>
    private let streetPoints: SpatialGrid<Int>
    private let streetOfPoint: [Int]
    /// Each entry's name in characters: shorter names rank first among equals.
    private let nameLengths: [Int]

    /// The places file from its bytes; a damaged or malformed file throws, saying what is wrong.
    public init(bytes: [UInt8]) throws(PlaceFileError) {
        let file = try PlaceFile(bytes: bytes)
        area = file.area
        nameLengths = file.entries.map(\.name.count)
        words = TokenIndex(
            documents: file.entries.map { entry in PlaceText.tokens([entry.name, entry.alternateName ?? ""].joined(separator: " ")) })
        var addresses = SpatialGrid<Int>(cellSizeDegrees: 0.002)
        var streets: [String: Int] = [:]
        for (index, entry) in file.entries.enumerated() {
            if entry.kind == .address { addresses.update(index, to: entry.point) }
            if entry.kind == .street { streets[entry.name] = index }
        }
        var entries = file.entries
        for index in file.placesWithoutAddress {
            let place = entries[index]
            guard let nearest = addresses.nearest(to: place.point, within: Self.placeAddressRadius, limit: 1).first else { continue }
            entries[index] = PlaceEntry(
                kind: .place, name: place.name, alternateName: place.alternateName, category: place.category, point: place.point,
                address: "\(place.name), \(entries[nearest.id].address)")
        }
        self.entries = entries
        var streetPoints = SpatialGrid<Int>(cellSizeDegrees: 0.002)
        var streetOfPoint: [Int] = []
        for (point, street) in file.streetPoints {
            guard let entry = streets[street] else {
                throw PlaceFileError("places file: a point along '\(street.prefix(60))', which has no street entry")
            }
            streetPoints.update(streetOfPoint.count, to: point)
            streetOfPoint.append(entry)
        }
        self.addresses = addresses
        self.streetPoints = streetPoints
        self.streetOfPoint = streetOfPoint
    }

    /// The file shipped with this module (`Data/helsinki.places`, central Helsinki).
    public static func bundled() throws -> PlaceIndex {
        try PlaceIndex(bytes: try bundledBytes())
    }

    static func bundledBytes() throws -> [UInt8] {
        guard let url = Bundle.module.url(forResource: "helsinki", withExtension: "places") else {
            throw PlaceFileError("places file: helsinki.places is not in the Places resource bundle")
        }
        return Array(try Data(contentsOf: url))
    }

    /// The entries whose words match every word of `query` (each exactly, as a prefix or with a
    /// typo), best match first, then nearest `near` first; at most `limit` (1…50). A query with a
    /// house number that no address has is searched again without the number.
    public func search(_ query: String, near: GeoPoint? = nil, limit: Int = 10) -> [PlaceMatch] {
        let limit = min(max(limit, 1), Self.maxLimit)
        let tokens = Array(PlaceText.tokens(query).prefix(Self.maxWords))
        let found = ranked(tokens, near: near, limit: limit)
        let words = tokens.filter { !PlaceText.isNumber($0) }
        if found.isEmpty, !words.isEmpty, words.count < tokens.count { return ranked(words, near: near, limit: limit) }
        return found
    }

    /// The nearest address within `addressRadius` of `point`, else the nearest street within
    /// `streetRadius`; nil when there is neither (outside the area).
    public func reverse(_ point: GeoPoint) -> ReverseMatch? {
        guard point.isValid else { return nil }
        if let address = addresses.nearest(to: point, within: Self.addressRadius, limit: 1).first {
            return ReverseMatch(entry: entries[address.id], distance: address.distance)
        }
        if let street = streetPoints.nearest(to: point, within: Self.streetRadius, limit: 1).first {
            return ReverseMatch(entry: entries[streetOfPoint[street.id]], distance: street.distance)
        }
        return nil
    }

    private func ranked(_ tokens: [String], near: GeoPoint?, limit: Int) -> [PlaceMatch] {
        guard !tokens.isEmpty else { return [] }
        // Per entry: its worst and its total match over the query's words; all words must match.
        var scores: [Int32: (worst: TokenIndex.Match, total: Int)] = [:]
        for (position, token) in tokens.enumerated() {
            // A single word with enough exact and prefix matches: typos would rank after them all.
            var matches = words.entries(matching: token, typing: position == tokens.count - 1, typos: tokens.count > 1)
            if tokens.count == 1, matches.count < limit { matches = words.entries(matching: token, typing: true) }
            if position == 0 {
                scores = matches.mapValues { ($0, $0.rawValue) }
            } else {
                var both: [Int32: (worst: TokenIndex.Match, total: Int)] = [:]
                for (entry, score) in scores {
                    if let match = matches[entry] { both[entry] = (max(score.worst, match), score.total + match.rawValue) }
                }
                scores = both
            }
            if scores.isEmpty { return [] }
        }
        let near = near.flatMap { $0.isValid ? $0 : nil }
        // One key per candidate, compared as a tuple; the entry's place in the file breaks ties.
        let keys = scores.map { index, score in
            let entry = entries[Int(index)]
            let distance = near.map { entry.point.distance(to: $0) }
            return (score.worst.rawValue, score.total, distance ?? 0, Self.kindOrder(entry.kind), nameLengths[Int(index)], index)
        }
        return keys.sorted { $0 < $1 }.prefix(limit).map { key in
            PlaceMatch(entry: entries[Int(key.5)], distance: near == nil ? nil : key.2)
        }
    }

    private static func kindOrder(_ kind: PlaceKind) -> Int {
        switch kind {
        case .street: 0
        case .place: 1
        case .address: 2
        }
    }
}
