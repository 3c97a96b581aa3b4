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
            var reader = FastBatchReader(bytes: buffer)
            return reader.read()
        }
        if let fast { return fast }
        return try JSONCoding.decode(IngestBatch.self, from: bytes)
    }
}

/// A one-pass reader of the common batch shape; nil means "not for me", never "invalid".
struct FastBatchReader {
    let bytes: UnsafeBufferPointer<UInt8>
    var index = 0

    init(bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

    mutating func read() -> IngestBatch? {
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
                guard optionalNumber(&accuracy) else { return nil }
            case "speed":
                bit = 16
                guard optionalNumber(&speed) else { return nil }
            case "bearing":
                bit = 32
                guard optionalNumber(&bearing) else { return nil }
            case "altitude":
                bit = 64
                guard optionalNumber(&altitude) else { return nil }
            case "mocked":
                bit = 128
                if consumeNull() {
                    mocked = nil
                } else {
                    guard let value = boolean() else { return nil }
                    mocked = value
                }
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

    mutating func optionalNumber(_ target: inout Double?) -> Bool {
        if consumeNull() {
            target = nil
            return true
        }
        guard let value = number() else { return false }
        target = value
        return true
    }

    // MARK: Tokens

    mutating func skipSpace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x0A, 0x0D, 0x09: index += 1
            default: return
            }
        }
    }

    mutating func peek() -> UInt8? {
        skipSpace()
        return index < bytes.count ? bytes[index] : nil
    }

    mutating func consume(_ byte: UInt8) -> Bool {
        guard peek() == byte else { return false }
        index += 1
        return true
    }

    mutating func atEnd() -> Bool {
        skipSpace()
        return index == bytes.count
    }

    mutating func consumeLiteral(_ literal: StaticString) -> Bool {
        skipSpace()
        let count = literal.utf8CodeUnitCount
        guard index + count <= bytes.count else { return false }
        for offset in 0..<count where bytes[index + offset] != literal.utf8Start[offset] { return false }
        index += count
        return true
    }

    mutating func consumeNull() -> Bool { consumeLiteral("null") }

    mutating func boolean() -> Bool? {
        if consumeLiteral("true") { return true }
        if consumeLiteral("false") { return false }
        return nil
    }

    /// A string without escapes or control characters (else: not for the fast path).
    mutating func string() -> String? {
        guard consume(UInt8(ascii: "\"")) else { return nil }
        let start = index
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                let text = String(validating: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
                index += 1
                return text
            }
            if byte == UInt8(ascii: "\\") || byte < 0x20 { return nil }
            index += 1
        }
        return nil
    }

    /// A plain decimal integer, as `UInt64` (no sign, no fraction, no exponent, no leading zero).
    mutating func unsigned() -> UInt64? {
        skipSpace()
        let start = index
        var value: UInt64 = 0
        while index < bytes.count, bytes[index] >= 48, bytes[index] <= 57 {
            let (times10, overflow1) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = times10.addingReportingOverflow(UInt64(bytes[index] - 48))
            guard !overflow1, !overflow2 else { return nil }
            value = sum
            index += 1
        }
        guard index > start, !(bytes[start] == 48 && index - start > 1) else { return nil }
        if index < bytes.count, [UInt8(ascii: "."), UInt8(ascii: "e"), UInt8(ascii: "E")].contains(bytes[index]) { return nil }
        return value
    }

    /// A number in the common form `-?digits(.digits)?` with at most 15 significant digits, converted
    /// exactly (Clinger's fast path: an integer below 2^53 divided by an exact power of ten is
    /// correctly rounded). Exponents, and longer or odder numbers, go to JSONDecoder.
    mutating func number() -> Double? {
        skipSpace()
        var negative = false
        if index < bytes.count, bytes[index] == UInt8(ascii: "-") {
            negative = true
            index += 1
        }
        let start = index
        var mantissa: Int64 = 0
        var digits = 0
        var fraction = 0
        var inFraction = false
        while index < bytes.count {
            let byte = bytes[index]
            if byte >= 48 && byte <= 57 {
                mantissa = mantissa * 10 + Int64(byte - 48)
                digits += 1
                if inFraction { fraction += 1 }
                guard digits <= 15 else { return nil }
            } else if byte == UInt8(ascii: ".") && !inFraction {
                inFraction = true
                guard index > start else { return nil }
            } else {
                break
            }
            index += 1
        }
        guard digits > 0, !(inFraction && fraction == 0) else { return nil }
        // A leading zero is only allowed alone before the point ("0.5", not "05").
        if bytes[start] == 48, index - start > 1, bytes[start + 1] != UInt8(ascii: ".") { return nil }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") { return nil }
        let value = Double(mantissa) / FastBatchReader.powersOfTen[fraction]
        return negative ? -value : value
    }

    static let powersOfTen: [Double] = (0...15).map { pow(10, Double($0)) }
}
