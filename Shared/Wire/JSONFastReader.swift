import Foundation

/// A value with a one-pass reader for its common shape, tried before `JSONDecoder` on hot paths
/// (events every service follows, replies of busy ops). `JSONCoding.decode` prefers it.
///
/// The contract that keeps the two from ever disagreeing: `read` returns nil — "not for me",
/// never "invalid" — at the first thing it does not handle (an escape in a string, an unusual
/// number, a rarely present member, anything malformed or repeated), and JSONDecoder decodes the
/// bytes instead, so errors still name their field. What it does return must equal what
/// JSONDecoder gives; a conformer proves it in a test that compares the two on mutated input.
public protocol JSONReadable: Decodable {
    static func read(from reader: inout JSONFastReader) -> Self?
}

extension JSONReadable {
    /// The whole of `bytes` as one value, or nil (see `JSONReadable`).
    public static func readWhole(_ bytes: [UInt8]) -> Self? {
        bytes.withUnsafeBufferPointer { buffer in
            var reader = JSONFastReader(bytes: buffer)
            guard let value = read(from: &reader), reader.atEnd() else { return nil }
            return value
        }
    }
}

/// The tokens of a one-pass JSON reader over bytes. Every method returns nil/false without a
/// promise about where the reader stands: a caller that gets one gives up on the whole value.
public struct JSONFastReader {
    public let bytes: UnsafeBufferPointer<UInt8>
    public var index = 0

    public init(bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

    // MARK: Structure

    /// Reads an object, calling `member` with each key; `member` reads the value (false: give up).
    /// Keys are not checked for repeats here: a reader that cares keeps a record (a bit a member).
    public mutating func object(_ member: (inout JSONFastReader, String) -> Bool) -> Bool {
        guard consume(UInt8(ascii: "{")) else { return false }
        if consume(UInt8(ascii: "}")) { return true }
        repeat {
            guard let key = string(), consume(UInt8(ascii: ":")), member(&self, key) else { return false }
        } while consume(UInt8(ascii: ","))
        return consume(UInt8(ascii: "}"))
    }

    /// Reads an array, calling `element` for each element (false: give up).
    public mutating func array(_ element: (inout JSONFastReader) -> Bool) -> Bool {
        guard consume(UInt8(ascii: "[")) else { return false }
        if consume(UInt8(ascii: "]")) { return true }
        repeat {
            guard element(&self) else { return false }
        } while consume(UInt8(ascii: ","))
        return consume(UInt8(ascii: "]"))
    }

    /// Skips any value, checking that it is well-formed JSON the fast path could read.
    public mutating func skipValue(depth: Int = 0) -> Bool {
        guard depth < 64 else { return false }
        switch peek() {
        case UInt8(ascii: "{"): return object { reader, _ in reader.skipValue(depth: depth + 1) }
        case UInt8(ascii: "["): return array { $0.skipValue(depth: depth + 1) }
        case UInt8(ascii: "\""): return string() != nil
        case UInt8(ascii: "t"), UInt8(ascii: "f"): return boolean() != nil
        case UInt8(ascii: "n"): return consumeNull()
        default: return number() != nil
        }
    }

    /// Any value as a `JSONValue` (metadata); nil where the fast path does not go.
    public mutating func jsonValue(depth: Int = 0) -> JSONValue? {
        guard depth < 64 else { return nil }
        switch peek() {
        case UInt8(ascii: "{"):
            var members: [String: JSONValue] = [:]
            let read = object { reader, key in
                guard members[key] == nil, let value = reader.jsonValue(depth: depth + 1) else { return false }
                members[key] = value
                return true
            }
            return read ? .object(members) : nil
        case UInt8(ascii: "["): return elements { $0.jsonValue(depth: depth + 1) }.map(JSONValue.array)
        case UInt8(ascii: "\""): return string().map(JSONValue.string)
        case UInt8(ascii: "t"), UInt8(ascii: "f"): return boolean().map(JSONValue.bool)
        case UInt8(ascii: "n"): return consumeNull() ? .null : nil
        default: return number().map(JSONValue.number)
        }
    }

    // MARK: Values

    /// A string without escapes or control characters (else: not for the fast path).
    public mutating func string() -> String? {
        guard consume(UInt8(ascii: "\"")) else { return nil }
        let start = index
        var ascii = true
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                let utf8 = UnsafeBufferPointer(rebasing: bytes[start..<index])
                // ASCII (nearly every string here) is valid UTF-8 as it is, and `decoding` takes it
                // without the generic validation, whose run-time type lookups cost more than the copy.
                let text = ascii ? String(decoding: utf8, as: UTF8.self) : String(validating: utf8, as: UTF8.self)
                index += 1
                return text
            }
            if byte == UInt8(ascii: "\\") || byte < 0x20 { return nil }
            if byte >= 0x80 { ascii = false }
            index += 1
        }
        return nil
    }

    /// An RFC 3339 time, as `JSONCoding`'s date strategy reads it.
    public mutating func time() -> Date? {
        string().flatMap(RFC3339.parse)
    }

    /// An array whose elements `element` reads (nil for one: give up).
    public mutating func elements<Element>(_ element: (inout JSONFastReader) -> Element?) -> [Element]? {
        var values: [Element] = []
        let read = array { reader in
            guard let value = element(&reader) else { return false }
            values.append(value)
            return true
        }
        return read ? values : nil
    }

    /// An array of strings.
    public mutating func strings() -> [String]? { elements { $0.string() } }

    /// An array of numbers (a position).
    public mutating func numbers() -> [Double]? { elements { $0.number() } }

    /// An object of JSON values (metadata).
    public mutating func members() -> [String: JSONValue]? {
        guard case .object(let members) = jsonValue() else { return nil }
        return members
    }

    public mutating func boolean() -> Bool? {
        if consumeLiteral("true") { return true }
        if consumeLiteral("false") { return false }
        return nil
    }

    /// A plain decimal integer, as `UInt64` (no sign, no fraction, no exponent, no leading zero).
    public mutating func unsigned() -> UInt64? {
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

    /// A plain decimal `Int` (an optional minus, then as `unsigned`).
    public mutating func integer() -> Int? {
        let negative = consume(UInt8(ascii: "-"))
        if negative, index < bytes.count, bytes[index] < 48 || bytes[index] > 57 { return nil }
        guard let magnitude = unsigned(), magnitude <= UInt64(Int.max) else { return nil }
        return negative ? -Int(magnitude) : Int(magnitude)
    }

    /// A number in the common form `-?digits(.digits)?`. Up to 15 significant digits it is converted
    /// exactly here (Clinger's fast path: an integer below 2^53 divided by an exact power of ten is
    /// correctly rounded); 16 to 40 digits — a computed coordinate written as its shortest
    /// round-trip form has 16 or 17 — go to the standard library's correctly rounded parser.
    /// An exponent is read by the standard library's parser too; longer or odder numbers, and
    /// numbers beyond `Double`'s range, go to JSONDecoder.
    public mutating func number() -> Double? {
        skipSpace()
        let numberStart = index
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
                digits += 1
                if digits <= 15 { mantissa = mantissa * 10 + Int64(byte - 48) }
                if inFraction { fraction += 1 }
                guard digits <= 40 else { return nil }
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
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            // JSONEncoder writes small and large doubles with an exponent (7.8e-05): check JSON's
            // grammar here, then let the standard library round the whole text.
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "-") || bytes[index] == UInt8(ascii: "+") { index += 1 }
            let exponentStart = index
            while index < bytes.count, bytes[index] >= 48, bytes[index] <= 57, index - exponentStart < 3 { index += 1 }
            guard index > exponentStart, index == bytes.count || bytes[index] < 48 || bytes[index] > 57 else { return nil }
            // Only normal results: what overflows or underflows is JSONDecoder's to refuse.
            return Double(String(decoding: UnsafeBufferPointer(rebasing: bytes[numberStart..<index]), as: UTF8.self)).flatMap {
                $0.isNormal ? $0 : nil
            }
        }
        if digits > 15 { return Double(String(decoding: UnsafeBufferPointer(rebasing: bytes[numberStart..<index]), as: UTF8.self)) }
        let value = Double(mantissa) / Self.powersOfTen[fraction]
        return negative ? -value : value
    }

    static let powersOfTen: [Double] = (0...15).map { pow(10, Double($0)) }

    /// `null` or a value read by `read` (an optional member); false: give up.
    public mutating func optional<Value>(_ target: inout Value?, _ read: (inout JSONFastReader) -> Value?) -> Bool {
        if consumeNull() {
            target = nil
            return true
        }
        guard let value = read(&self) else { return false }
        target = value
        return true
    }

    // MARK: Tokens

    public mutating func skipSpace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x0A, 0x0D, 0x09: index += 1
            default: return
            }
        }
    }

    public mutating func peek() -> UInt8? {
        skipSpace()
        return index < bytes.count ? bytes[index] : nil
    }

    public mutating func consume(_ byte: UInt8) -> Bool {
        guard peek() == byte else { return false }
        index += 1
        return true
    }

    public mutating func atEnd() -> Bool {
        skipSpace()
        return index == bytes.count
    }

    public mutating func consumeLiteral(_ literal: StaticString) -> Bool {
        skipSpace()
        let count = literal.utf8CodeUnitCount
        guard index + count <= bytes.count else { return false }
        for offset in 0..<count where bytes[index + offset] != literal.utf8Start[offset] { return false }
        index += count
        return true
    }

    public mutating func consumeNull() -> Bool { consumeLiteral("null") }
}

// MARK: Members, as `@WireModel` reads them

extension JSONFastReader {
    /// A required member's value into `target`. False — give up — when the key came before (`bit`
    /// is already in `seen`: JSONDecoder's choice between repeats is not one to guess) or the value
    /// is not one the fast path reads.
    @inlinable
    public mutating func member<Value: JSONReadable>(_ target: inout Value?, _ bit: UInt64, _ seen: inout UInt64) -> Bool {
        guard seen & bit == 0 else { return false }
        seen |= bit
        guard let value = Value.read(from: &self) else { return false }
        target = value
        return true
    }

    /// An optional member: `null` leaves `target` nil, as an absent member does.
    @inlinable
    public mutating func optionalMember<Value: JSONReadable>(_ target: inout Value?, _ bit: UInt64, _ seen: inout UInt64) -> Bool {
        guard seen & bit == 0 else { return false }
        seen |= bit
        if consumeNull() { return true }
        guard let value = Value.read(from: &self) else { return false }
        target = value
        return true
    }
}
