import Geo

/// Places in the central Helsinki extract (`Tools/roads/fetch-extract.sh`), each on or beside a
/// street that cars can both reach and leave (checked with pgRouting over the car import), and
/// the pairs between them that every road provider's tests drive. One list, so that providers can
/// be compared on the same trips (embedded and pgRouting should agree on distance within 5%).
enum HelsinkiPairs {
    static let railwaySquare = GeoPoint(latitude: 60.1712, longitude: 24.9436)
    static let senateSquare = GeoPoint(latitude: 60.1690, longitude: 24.9510)
    static let esplanadi = GeoPoint(latitude: 60.1676, longitude: 24.9468)
    static let stockmann = GeoPoint(latitude: 60.1686, longitude: 24.9417)
    static let kaisaniemi = GeoPoint(latitude: 60.1733, longitude: 24.9465)
    static let kluuvi = GeoPoint(latitude: 60.1713, longitude: 24.9480)
    static let erottaja = GeoPoint(latitude: 60.1661, longitude: 24.9436)
    static let punavuori = GeoPoint(latitude: 60.1650, longitude: 24.9395)
    static let mannerheimintie = GeoPoint(latitude: 60.1705, longitude: 24.9395)
    static let toolonlahti = GeoPoint(latitude: 60.1765, longitude: 24.9405)
    static let kruununhaka = GeoPoint(latitude: 60.1722, longitude: 24.9525)
    static let bulevardi = GeoPoint(latitude: 60.1665, longitude: 24.9380)

    /// Trips across the extract: short and long, both directions of some (one-way streets make
    /// them differ).
    static let pairs: [(from: GeoPoint, to: GeoPoint)] = [
        (railwaySquare, senateSquare), (senateSquare, railwaySquare),
        (esplanadi, toolonlahti), (toolonlahti, esplanadi),
        (stockmann, kruununhaka), (kaisaniemi, punavuori),
        (kluuvi, bulevardi), (erottaja, mannerheimintie),
        (punavuori, kruununhaka), (mannerheimintie, kluuvi),
        (bulevardi, kaisaniemi), (kruununhaka, erottaja),
    ]

    /// Tampere: on roads, but far outside the Helsinki extract.
    static let farAway = GeoPoint(latitude: 61.4978, longitude: 23.7610)
}
