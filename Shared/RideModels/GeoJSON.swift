import Bus
import Geo

/// A GeoJSON point, `{"type":"Point","coordinates":[longitude, latitude]}` — the shape HyperTrack's
/// APIs use for every location. Decoding is strict: the type must be "Point" and the coordinates
/// exactly two finite numbers in range, so a bad point is named where it is.
public struct GeoJSONPoint: Codable, Sendable, Hashable {
    public var point: GeoPoint

    public init(_ point: GeoPoint) { self.point = point }

    public init(latitude: Double, longitude: Double) { point = GeoPoint(latitude: latitude, longitude: longitude) }

    enum CodingKeys: String, CodingKey { case type, coordinates }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let type = try container.decode(String.self, forKey: .type)
        guard type == "Point" else {
            throw DecodingError.dataCorruptedError(forKey: .type, in: container, debugDescription: "must be \"Point\", got \"\(type)\"")
        }
        let coordinates = try container.decode([Double].self, forKey: .coordinates)
        guard coordinates.count == 2 else {
            throw DecodingError.dataCorruptedError(forKey: .coordinates, in: container,
                                                   debugDescription: "must be [longitude, latitude], got \(coordinates.count) numbers")
        }
        let point = GeoPoint(latitude: coordinates[1], longitude: coordinates[0])
        guard point.isValid else {
            throw DecodingError.dataCorruptedError(forKey: .coordinates, in: container,
                                                   debugDescription: "longitude must be within ±180 and latitude within ±90, got \(coordinates)")
        }
        self.point = point
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode("Point", forKey: .type)
        try container.encode([point.longitude, point.latitude], forKey: .coordinates)
    }
}

extension GeoJSONPoint: JSONWritable {
    public func writeJSON(to out: inout [UInt8]) {
        out.append(contentsOf: #"{"coordinates":["#.utf8)
        EnvelopeWriter.appendNumber(point.longitude, to: &out)
        out.append(UInt8(ascii: ","))
        EnvelopeWriter.appendNumber(point.latitude, to: &out)
        out.append(contentsOf: #"],"type":"Point"}"#.utf8)
    }
}
