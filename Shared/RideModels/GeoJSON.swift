import Geo
import Wire

/// A GeoJSON point, `{"type":"Point","coordinates":[longitude, latitude]}` — the shape HyperTrack's
/// APIs use for every location. Decoding is strict: the type must be "Point" and the coordinates
/// exactly two finite numbers in range, so a bad point is named where it is.
public struct GeoJSONPoint: Codable, Sendable, Hashable {
    public var point: GeoPoint

    public init(_ point: GeoPoint) { self.point = point }

    public init(latitude: Double, longitude: Double) { point = GeoPoint(latitude: latitude, longitude: longitude) }

    /// The point as JSON has it.
    @WireModel
    public struct Members: Codable, Sendable {
        /// Always `Point`.
        @WireField(pattern: "^Point$")
        public var type: String
        /// `[longitude, latitude]`, within ±180 and ±90.
        @WireField(minItems: 2, maxItems: 2)
        public var coordinates: [Double]
    }

    public init(from decoder: any Decoder) throws {
        let members = try Members(from: decoder)
        guard members.type == "Point" else {
            throw DecodingError.dataCorrupted(
                .init(
                    codingPath: decoder.codingPath + [Members.CodingKeys.type],
                    debugDescription: "must be \"Point\", got \"\(members.type)\""))
        }
        guard members.coordinates.count == 2 else {
            throw DecodingError.dataCorrupted(
                .init(
                    codingPath: decoder.codingPath + [Members.CodingKeys.coordinates],
                    debugDescription: "must be [longitude, latitude], got \(members.coordinates.count) numbers"))
        }
        guard let point = GeoJSONPoint(wireForm: members) else {
            throw DecodingError.dataCorrupted(
                .init(
                    codingPath: decoder.codingPath + [Members.CodingKeys.coordinates],
                    debugDescription: "longitude must be within ±180 and latitude within ±90, got \(members.coordinates)"))
        }
        self = point
    }

    public func encode(to encoder: any Encoder) throws { try wireForm.encode(to: encoder) }
}

extension GeoJSONPoint: WireRepresented {
    public var wireForm: Members { Members(type: "Point", coordinates: [point.longitude, point.latitude]) }

    public init?(wireForm: Members) {
        guard wireForm.type == "Point", wireForm.coordinates.count == 2 else { return nil }
        let point = GeoPoint(latitude: wireForm.coordinates[1], longitude: wireForm.coordinates[0])
        guard point.isValid else { return nil }
        self.point = point
    }
}
