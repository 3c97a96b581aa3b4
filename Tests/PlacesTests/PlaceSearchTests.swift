import Foundation
import Geo
import Testing

@testable import Places

/// Search over the shipped file of central Helsinki: names checked against the data.
struct PlaceSearchTests {
    static let index = Result { try PlaceIndex.bundled() }
    var index: PlaceIndex { get throws { try Self.index.get() } }
    /// The central railway station's square.
    static let station = GeoPoint(latitude: 60.1710, longitude: 24.9414)

    @Test func loadsTheShippedFile() throws {
        let index = try index
        #expect(index.area == "Helsinki")
        for kind in PlaceKind.allCases { #expect(index.entries.count { $0.kind == kind } > 50) }
    }

    @Test func findsAStreetByItsName() throws {
        let first = try #require(try index.search("Mannerheimintie").first)
        #expect(first.entry.kind == .street)
        #expect(first.entry.name == "Mannerheimintie")
        #expect(first.entry.address == "Mannerheimintie, Helsinki")
        #expect(first.distance == nil)
    }

    @Test(arguments: [
        "mannerheimin", "MANNERHEIMINTIE", "Mannerhiemintie", "mannerheimintei", "Mannerheimvägen", "mannerheimvagen", "manerheimin",
    ])
    func findsItByAPrefixATypoOrItsSwedishName(_ query: String) throws {
        let names = try index.search(query, limit: 5).map(\.entry.name)
        #expect(names.contains("Mannerheimintie"), "\(query): \(names)")
    }

    @Test(arguments: [
        ("etelaesplanadi", "Eteläesplanadi"), ("amoksenkaytava", "Amoksenkäytävä"), ("olhus stockholm", "Ølhus Stockholm"),
        ("Ølhus Köbenhavn", "Ølhus København"),
        ("ateneum", "Ateneum"),
    ])
    func diacriticsAreOptional(_ query: String, _ expected: String) throws {
        #expect(try index.search(query, limit: 3).first?.entry.name == expected)
    }

    @Test func aHouseNumberFindsTheAddress() throws {
        let first = try #require(try index.search("Mannerheimintie 10").first)
        #expect(first.entry.kind == .address)
        #expect(first.entry.address == "Mannerheimintie 10, Helsinki")
        // Letters join their number however they are written.
        #expect(try index.search("mannerheiminaukio 1 b").first?.entry.name == "Mannerheiminaukio 1 B")
        // A number no address has: the street still comes back.
        #expect(try index.search("Mannerheimintie 999").first?.entry.name == "Mannerheimintie")
    }

    @Test func findsNamedPlacesWithTheirAddress() throws {
        let stockmann = try #require(try index.search("stockman").first { $0.entry.category == "shop=department_store" })
        #expect(stockmann.entry.address == "Stockmann, Aleksanterinkatu 52, Helsinki")
        let station = try #require(try index.search("päärautatieasema").first)
        #expect(station.entry.name == "Helsingin päärautatieasema")
        #expect(station.entry.point.distance(to: Self.station) < 200)
    }

    @Test func nearestFirstAroundAPoint() throws {
        let index = try index
        let corner = GeoPoint(latitude: 60.1650, longitude: 24.9500)
        let found = index.search("Espresso House", near: corner, limit: 10)
        #expect(found.count >= 5)
        let distances = found.map { $0.distance ?? -1 }
        #expect(distances == distances.sorted() && distances.first! >= 0, "\(distances)")
        let fromElsewhere = index.search("Espresso House", near: GeoPoint(latitude: 60.1780, longitude: 24.9360), limit: 10)
        #expect(fromElsewhere.first?.entry.point != found.first?.entry.point)
    }

    @Test func betterMatchesComeFirstAndTheLimitHolds() throws {
        let index = try index
        let found = index.search("ann", limit: 50)
        #expect(found.count == 50)
        #expect(index.search("ann", limit: 3).count == 3)
        // "Annankatu" (a prefix) before anything that only has a typo of "ann".
        #expect(found.first?.entry.name.lowercased().hasPrefix("ann") == true)
        #expect(index.search("", limit: 5).isEmpty)
        #expect(index.search("  ,. ", limit: 5).isEmpty)
        #expect(index.search("qqqqzzzz xxyyww").isEmpty)
    }

    @Test func aSearchIsFast() throws {
        let index = try index
        let queries = [
            "m", "ma", "man", "mann", "manne", "manner", "mannerh", "mannerhe", "stockm", "aleksanterinkatu 5", "espresso hou", "kaivokatu",
        ]
        let clock = ContinuousClock()
        var results = 0
        let elapsed = clock.measure {
            for _ in 0..<5 { for query in queries { results += index.search(query, near: Self.station, limit: 10).count } }
        }
        let perSearch = elapsed / (5 * queries.count)
        print("PlacesTests: one search takes \(perSearch) on average (this build)")
        #expect(results > 0)
        // About 1 ms in a debug build, 0.1 ms in release (docs/places.md); this catches a regression to a
        // scan per entry, with room for a machine whose two cores run the whole suite.
        #expect(perSearch < .milliseconds(50))
    }
}
