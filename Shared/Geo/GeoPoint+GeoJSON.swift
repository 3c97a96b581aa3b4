/// GeoJSON (RFC 7946) positions are `[longitude, latitude]`, the reverse of how people say them;
/// these helpers are the one place that order is written down.
extension GeoPoint {
    /// `[longitude, latitude]`.
    public var coordinates: [Double] {
        [longitude, latitude]
    }

    /// Reads a GeoJSON position `[longitude, latitude]` or `[longitude, latitude, altitude]`
    /// (the altitude is ignored). Fails for any other length or a point that is not `isValid`.
    public init?(coordinates: [Double]) {
        guard coordinates.count == 2 || coordinates.count == 3 else { return nil }
        let point = GeoPoint(latitude: coordinates[1], longitude: coordinates[0])
        guard point.isValid else { return nil }
        self = point
    }
}
