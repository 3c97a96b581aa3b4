import Bus
import Foundation

extension IngestBatch {
    /// Decodes a batch: a fast path for the common shape, `JSONDecoder` for everything else.
    ///
    /// Ingest decodes every location of every device (hundreds of thousands a second), and
    /// JSONDecoder costs several microseconds per location — most of a tracking process's CPU. The
    /// fast path reads the shape the SDK sends (`publishable_key`, `device_id`, `batch_id`,
    /// `locations` of numbers, times, booleans and nulls) in one pass over the bytes. At the first
    /// thing it does not handle — an escape in a string, `device` or `geotags`, an unknown or
    /// repeated key, an unusual number, anything malformed — it gives up and JSONDecoder decodes the
    /// batch instead, so the two can never disagree, and errors still name their field (tested on
    /// random and malformed batches).
    public static func decode(from bytes: [UInt8]) throws -> IngestBatch {
        let fast = bytes.withUnsafeBufferPointer { buffer -> IngestBatch? in
            var reader = JSONFastReader(bytes: buffer)
            return reader.readIngestBatch()
        }
        if let fast { return fast }
        return try JSONCoding.decode(IngestBatch.self, from: bytes)
    }
}

/// A one-pass reader of the common batch shape; nil means "not for me", never "invalid".
extension JSONFastReader {
    mutating func readIngestBatch() -> IngestBatch? {
        guard consume(UInt8(ascii: "{")) else { return nil }
        var key: String?
        var deviceID: String?
        var batchID: UInt64?
        var locations: [DeviceLocation]?
        var seen = 0
        if peek() == UInt8(ascii: "}") { return nil }
        repeat {
            guard let name = string() else { return nil }
            guard consume(UInt8(ascii: ":")) else { return nil }
            switch name {
            case "publishable_key":
                guard seen & 1 == 0, let value = string() else { return nil }
                key = value
                seen |= 1
            case "device_id":
                guard seen & 2 == 0 else { return nil }
                if consumeNull() {
                    deviceID = nil
                } else {
                    guard let value = string() else { return nil }
                    deviceID = value
                }
                seen |= 2
            case "batch_id":
                guard seen & 4 == 0, let value = unsigned() else { return nil }
                batchID = value
                seen |= 4
            case "locations":
                guard seen & 8 == 0, let value = locationArray() else { return nil }
                locations = value
                seen |= 8
            default:
                return nil
            }
        } while consume(UInt8(ascii: ","))
        guard consume(UInt8(ascii: "}")), atEnd(), let key, let batchID, let locations else { return nil }
        return IngestBatch(publishableKey: key, deviceID: deviceID, batchID: batchID, locations: locations)
    }

    // MARK: Locations

    mutating func locationArray() -> [DeviceLocation]? {
        guard consume(UInt8(ascii: "[")) else { return nil }
        var locations: [DeviceLocation] = []
        if consume(UInt8(ascii: "]")) { return locations }
        repeat {
            guard let location = location() else { return nil }
            locations.append(location)
        } while consume(UInt8(ascii: ","))
        guard consume(UInt8(ascii: "]")) else { return nil }
        return locations
    }

    mutating func location() -> DeviceLocation? {
        guard consume(UInt8(ascii: "{")) else { return nil }
        var latitude: Double?
        var longitude: Double?
        var recordedAt: Date?
        var accuracy: Double?
        var speed: Double?
        var bearing: Double?
        var altitude: Double?
        var mocked: Bool?
        var seen = 0
        if peek() == UInt8(ascii: "}") { return nil }
        repeat {
            guard let name = string(), consume(UInt8(ascii: ":")) else { return nil }
            let bit: Int
            switch name {
            case "latitude":
                bit = 1
                guard let value = number() else { return nil }
                latitude = value
            case "longitude":
                bit = 2
                guard let value = number() else { return nil }
                longitude = value
            case "recorded_at":
                bit = 4
                guard let text = string(), let date = RFC3339.parse(text) else { return nil }
                recordedAt = date
            case "accuracy":
                bit = 8
                guard optional(&accuracy, { $0.number() }) else { return nil }
            case "speed":
                bit = 16
                guard optional(&speed, { $0.number() }) else { return nil }
            case "bearing":
                bit = 32
                guard optional(&bearing, { $0.number() }) else { return nil }
            case "altitude":
                bit = 64
                guard optional(&altitude, { $0.number() }) else { return nil }
            case "mocked":
                bit = 128
                guard optional(&mocked, { $0.boolean() }) else { return nil }
            default:
                return nil
            }
            guard seen & bit == 0 else { return nil }
            seen |= bit
        } while consume(UInt8(ascii: ","))
        guard consume(UInt8(ascii: "}")), let latitude, let longitude, let recordedAt else { return nil }
        return DeviceLocation(latitude: latitude, longitude: longitude, recordedAt: recordedAt, accuracy: accuracy, speed: speed,
                              bearing: bearing, altitude: altitude, mocked: mocked)
    }
}
