import Geo
import Testing

@testable import Places

struct PlaceReverseTests {
    var index: PlaceIndex { get throws { try PlaceSearchTests.index.get() } }

    @Test func theNearestAddress() throws {
        // Stockmann's department store, Aleksanterinkatu 52.
        let point = GeoPoint(latitude: 60.168294, longitude: 24.942156)
        let found = try #require(try index.reverse(point))
        #expect(found.entry.kind == .address)
        #expect(found.distance < 30)
        #expect(found.entry.address.hasSuffix(", Helsinki"))
        #expect(
            found.entry.name.hasPrefix("Aleksanterinkatu") || found.entry.name.hasPrefix("Mannerheimintie")
                || found.entry.name.hasPrefix("Keskuskatu"), "\(found)")
    }

    @Test func anAddressFoundBySearchIsItsOwnReverse() throws {
        let index = try index
        let address = try #require(index.search("Mannerheimintie 10").first)
        let found = try #require(index.reverse(address.entry.point))
        #expect(found.entry == address.entry)
        #expect(found.distance < 0.01)
    }

    @Test func farFromAnyAddressButNearAStreet() throws {
        let index = try index
        // Every street point keeps its street when no address is within 100 m.
        for entry in index.entries where entry.kind == .street {
            let found = try #require(index.reverse(entry.point), "nothing near \(entry.name)")
            #expect(found.distance <= (found.entry.kind == .street ? PlaceIndex.streetRadius : PlaceIndex.addressRadius))
        }
    }

    @Test func outsideTheAreaOrNotAPosition() throws {
        let index = try index
        #expect(index.reverse(GeoPoint(latitude: 60.30, longitude: 25.10)) == nil)
        #expect(index.reverse(GeoPoint(latitude: .nan, longitude: 24.94)) == nil)
        #expect(index.reverse(GeoPoint(latitude: 91, longitude: 24.94)) == nil)
    }
}

extension PlaceReverseTests {
    /// A place tagged without an address takes its building's: a booking names a street and number.
    @Test func aPlaceWithoutItsOwnAddressTakesTheNearestWithin30m() throws {
        let index = try index
        let taproom = try #require(index.search("8-bit taproom").first)
        let address = try #require(index.reverse(taproom.entry.point))
        #expect(address.distance <= PlaceIndex.placeAddressRadius)
        #expect(taproom.entry.address == "8-Bit Taproom, \(address.entry.address)")
        let places = index.entries.filter { $0.kind == .place }
        #expect(places.count { $0.address == "\($0.name), Helsinki" } < places.count / 4)
    }
}
