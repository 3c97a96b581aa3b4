import Foundation

/// The platform's JSON conventions in one place: snake_case field names are spelled out in each
/// type's CodingKeys (no key-strategy conversion on hot paths), dates are RFC 3339 strings.
public enum JSONCoding {
    public static func encoder(pretty: Bool = false) -> JSONEncoder {
        let encoder = JSONEncoder()
        // Sorted keys: the same value always gives the same bytes (tests, logs and diffs rely on it).
        encoder.outputFormatting =
            pretty ? [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes] : [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(RFC3339.format(date))
        }
        return encoder
    }

    public static func decoder() -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .custom { decoder in
            let container = try decoder.singleValueContainer()
            let text = try container.decode(String.self)
            guard let date = RFC3339.parse(text) else {
                throw DecodingError.dataCorruptedError(
                    in: container, debugDescription: "expected an RFC 3339 time such as 2026-11-21T09:30:00Z, got \"\(text)\"")
            }
            return date
        }
        return decoder
    }

    // Shared coders for the hot paths: JSONEncoder/JSONDecoder are Sendable and safe to use from
    // several threads at once; making one per call costs more than the call on small messages.
    private static let sharedEncoder = encoder()
    private static let sharedDecoder = decoder()

    /// `value` as compact JSON bytes.
    public static func encode(_ value: some Encodable) throws -> [UInt8] {
        if let writable = value as? any JSONWritable { return writable.jsonBytes }
        return Array(try sharedEncoder.encode(value))
    }

    /// Decodes `T` from JSON bytes; the error names the offending field (see `describe(_:)`).
    public static func decode<T: Decodable>(_ type: T.Type, from bytes: [UInt8]) throws -> T {
        if let readable = T.self as? any JSONReadable.Type, let value = readable.readWhole(bytes) as? T { return value }
        return try sharedDecoder.decode(T.self, from: Data(bytes))
    }

    /// `value` as JSON text: how the services' stores keep documents in TEXT columns.
    public static func encodeText(_ value: some Encodable) throws -> String {
        String(decoding: try encode(value), as: UTF8.self)
    }

    /// Decodes `T` from JSON text (a stored document).
    public static func decode<T: Decodable>(_ type: T.Type, fromText text: String) throws -> T {
        try decode(T.self, from: Array(text.utf8))
    }

    /// A one-line explanation of a decoding failure that names the field, e.g.
    /// `destination.radius: expected a number, found a string`.
    public static func describe(_ error: any Error) -> String {
        guard let error = error as? DecodingError else { return "\(error)" }
        switch error {
        case .keyNotFound(let key, let context):
            return "\(path(context.codingPath + [key])): required field is missing"
        case .typeMismatch(let type, let context):
            return "\(path(context.codingPath)): expected \(typeName(type)), \(found(context))"
        case .valueNotFound(let type, let context):
            return "\(path(context.codingPath)): expected \(typeName(type)), found null"
        case .dataCorrupted(let context):
            if context.codingPath.isEmpty {
                return "not valid JSON"
            }
            return "\(path(context.codingPath)): \(context.debugDescription)"
        @unknown default:
            return "\(error)"
        }
    }

    /// The dotted path of a field, e.g. `data.order.pickup.latitude` or `items[2].id`.
    public static func path(_ codingPath: [any CodingKey]) -> String {
        var text = ""
        for key in codingPath {
            if let index = key.intValue {
                text += "[\(index)]"
            } else {
                text += text.isEmpty ? key.stringValue : ".\(key.stringValue)"
            }
        }
        return text.isEmpty ? "(document)" : text
    }

    private static func typeName(_ type: Any.Type) -> String {
        switch type {
        case is String.Type: "a string"
        case is Bool.Type: "true or false"
        case is Int.Type, is Int64.Type, is Int32.Type, is UInt64.Type, is UInt.Type: "an integer"
        case is Double.Type, is Float.Type: "a number"
        case is [Any].Type: "an array"
        case is [String: Any].Type: "an object"
        default: "\(type)"
        }
    }

    private static func found(_ context: DecodingError.Context) -> String {
        // Foundation says e.g. "Expected to decode Double but found a string instead."
        let text = context.debugDescription
        if let range = text.range(of: "but found ") {
            return "found " + text[range.upperBound...].replacingOccurrences(of: " instead.", with: "")
        }
        return text
    }
}
