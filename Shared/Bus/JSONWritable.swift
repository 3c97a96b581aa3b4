import Foundation

/// A value that writes its own JSON, for replies and events on hot paths where a `JSONEncoder`
/// pass costs several times the work behind the value (a Nearby reply: ~80 µs encoded, ~5 µs
/// written). `JSONCoding.encode` prefers it. A conformer must write exactly what its `Encodable`
/// conformance gives through `JSONCoding` — sorted keys, absent optionals left out, RFC 3339
/// times — and prove it in a test that compares the two.
public protocol JSONWritable: Encodable {
    func writeJSON(to out: inout [UInt8])
}

extension JSONWritable {
    /// The value as JSON bytes.
    public var jsonBytes: [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(256)
        writeJSON(to: &out)
        return out
    }
}

/// Small pieces for writing JSON objects by hand.
public struct JSONObjectWriter {
    private var first = true

    public init(_ out: inout [UInt8]) {
        out.append(UInt8(ascii: "{"))
    }

    /// Starts the member `key` (a plain ASCII key, written as is); the caller writes its value.
    public mutating func key(_ key: StaticString, _ out: inout [UInt8]) {
        if !first { out.append(UInt8(ascii: ",")) }
        first = false
        out.append(UInt8(ascii: "\""))
        out.append(contentsOf: UnsafeBufferPointer(start: key.utf8Start, count: key.utf8CodeUnitCount))
        out.append(contentsOf: [UInt8(ascii: "\""), UInt8(ascii: ":")])
    }

    public func end(_ out: inout [UInt8]) {
        out.append(UInt8(ascii: "}"))
    }

    // Typed members; an absent optional writes nothing, as `JSONEncoder` leaves it out.

    public mutating func number(_ key: StaticString, _ value: Double?, _ out: inout [UInt8]) {
        guard let value else { return }
        self.key(key, &out)
        EnvelopeWriter.appendNumber(value, to: &out)
    }

    public mutating func integer(_ key: StaticString, _ value: (some BinaryInteger)?, _ out: inout [UInt8]) {
        guard let value else { return }
        self.key(key, &out)
        out.append(contentsOf: String(value).utf8)
    }

    public mutating func string(_ key: StaticString, _ value: String?, _ out: inout [UInt8]) {
        guard let value else { return }
        self.key(key, &out)
        EnvelopeWriter.appendQuoted(value, to: &out)
    }

    public mutating func bool(_ key: StaticString, _ value: Bool?, _ out: inout [UInt8]) {
        guard let value else { return }
        self.key(key, &out)
        out.append(contentsOf: (value ? "true" : "false").utf8)
    }

    /// An RFC 3339 time, as `JSONCoding`'s date strategy writes it.
    public mutating func time(_ key: StaticString, _ value: Date?, _ out: inout [UInt8]) {
        guard let value else { return }
        self.key(key, &out)
        out.append(UInt8(ascii: "\""))
        RFC3339.append(value, to: &out)
        out.append(UInt8(ascii: "\""))
    }

    /// An array of strings (always written, as `JSONEncoder` writes an empty array).
    public mutating func strings(_ key: StaticString, _ values: [String], _ out: inout [UInt8]) {
        self.key(key, &out)
        EnvelopeWriter.appendArray(values, to: &out) { EnvelopeWriter.appendQuoted($0, to: &$1) }
    }

    /// An array of values that write themselves (always written, empty or not).
    public mutating func values(_ key: StaticString, _ values: [some JSONWritable], _ out: inout [UInt8]) {
        self.key(key, &out)
        EnvelopeWriter.appendArray(values, to: &out) { $0.writeJSON(to: &$1) }
    }

    /// A member whose value is already JSON (e.g. a rarely present part encoded by `JSONCoding`).
    public mutating func raw(_ key: StaticString, _ json: [UInt8]?, _ out: inout [UInt8]) {
        guard let json else { return }
        self.key(key, &out)
        out.append(contentsOf: json)
    }

    /// An object of JSON values (metadata), keys sorted as `JSONEncoder` sorts them.
    public mutating func members(_ key: StaticString, _ members: [String: JSONValue]?, _ out: inout [UInt8]) {
        guard let members else { return }
        self.key(key, &out)
        JSONValue.writeObject(members, to: &out)
    }

    public mutating func value(_ key: StaticString, _ value: (some JSONWritable)?, _ out: inout [UInt8]) {
        guard let value else { return }
        self.key(key, &out)
        value.writeJSON(to: &out)
    }
}

extension JSONValue: JSONWritable {
    public func writeJSON(to out: inout [UInt8]) {
        switch self {
        case .null: out.append(contentsOf: "null".utf8)
        case .bool(let value): out.append(contentsOf: (value ? "true" : "false").utf8)
        case .number(let number):
            // The rule of `encode(to:)`: whole numbers that a Double holds exactly print as integers.
            if number.rounded() == number, abs(number) < 9.007_199_254_740_992e15, let whole = Int64(exactly: number) {
                out.append(contentsOf: String(whole).utf8)
            } else {
                EnvelopeWriter.appendNumber(number, to: &out)
            }
        case .string(let text): EnvelopeWriter.appendQuoted(text, to: &out)
        case .array(let elements):
            EnvelopeWriter.appendArray(elements, to: &out) { $0.writeJSON(to: &$1) }
        case .object(let members):
            JSONValue.writeObject(members, to: &out)
        }
    }

    /// An object with its keys in `JSONCoding`'s order (UTF-8 byte order).
    public static func writeObject(_ members: [String: JSONValue], to out: inout [UInt8]) {
        out.append(UInt8(ascii: "{"))
        let keys = members.keys.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        for (index, key) in keys.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            EnvelopeWriter.appendQuoted(key, to: &out)
            out.append(UInt8(ascii: ":"))
            members[key]!.writeJSON(to: &out)
        }
        out.append(UInt8(ascii: "}"))
    }
}

extension EnvelopeWriter {
    /// `elements` as a JSON array, each written by `write`.
    @inlinable
    public static func appendArray<Element>(_ elements: [Element], to out: inout [UInt8], _ write: (Element, inout [UInt8]) -> Void) {
        out.append(UInt8(ascii: "["))
        for (index, element) in elements.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            write(element, &out)
        }
        out.append(UInt8(ascii: "]"))
    }
}
