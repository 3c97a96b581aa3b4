import Foundation

// The values models are made of, written and read as JSONCoding (JSONEncoder with sorted keys and
// RFC 3339 dates, JSONDecoder) writes and reads them.

extension String: WireValue {
    @inlinable public func writeJSON(to out: inout [UInt8]) { JSONText.appendQuoted(self, to: &out) }
    @inlinable public static func read(from reader: inout JSONFastReader) -> String? { reader.string() }
    public static var wireSchema: WireSchema { .string() }
    public func check(_ rules: WireRules, at path: String) throws(WireViolation) { try rules.check(string: self, at: path) }
}

extension Bool: WireValue {
    @inlinable public func writeJSON(to out: inout [UInt8]) { out.append(contentsOf: (self ? "true" : "false").utf8) }
    @inlinable public static func read(from reader: inout JSONFastReader) -> Bool? { reader.boolean() }
    public static var wireSchema: WireSchema { .boolean }
}

extension Int: WireValue {
    public func validate(at path: String) throws(WireViolation) { try WireRules.checkSafeInteger(Double(self), at: path) }
    @inlinable public func writeJSON(to out: inout [UInt8]) { out.append(contentsOf: String(self).utf8) }
    @inlinable public static func read(from reader: inout JSONFastReader) -> Int? { reader.integer() }
    public static var wireSchema: WireSchema { .integer }
    public func check(_ rules: WireRules, at path: String) throws(WireViolation) { try rules.check(number: Double(self), at: path) }
}

extension Int64: WireValue {
    public func validate(at path: String) throws(WireViolation) { try WireRules.checkSafeInteger(Double(self), at: path) }
    @inlinable public func writeJSON(to out: inout [UInt8]) { out.append(contentsOf: String(self).utf8) }
    @inlinable public static func read(from reader: inout JSONFastReader) -> Int64? { reader.integer().map(Int64.init) }
    public static var wireSchema: WireSchema { .integer }
    public func check(_ rules: WireRules, at path: String) throws(WireViolation) { try rules.check(number: Double(self), at: path) }
}

extension Int32: WireValue {
    @inlinable public func writeJSON(to out: inout [UInt8]) { out.append(contentsOf: String(self).utf8) }
    @inlinable public static func read(from reader: inout JSONFastReader) -> Int32? { reader.integer().flatMap(Int32.init(exactly:)) }
    public static var wireSchema: WireSchema { .integer }
}

extension UInt64: WireValue {
    public func validate(at path: String) throws(WireViolation) { try WireRules.checkSafeInteger(Double(self), at: path) }
    @inlinable public func writeJSON(to out: inout [UInt8]) { out.append(contentsOf: String(self).utf8) }
    @inlinable public static func read(from reader: inout JSONFastReader) -> UInt64? { reader.unsigned() }
    public static var wireSchema: WireSchema { .integer }
    public func check(_ rules: WireRules, at path: String) throws(WireViolation) { try rules.check(number: Double(self), at: path) }
}

extension Double: WireValue {
    @inlinable public func writeJSON(to out: inout [UInt8]) { JSONText.appendNumber(self, to: &out) }
    @inlinable public static func read(from reader: inout JSONFastReader) -> Double? { reader.number() }
    public static var wireSchema: WireSchema { .number }
    public func check(_ rules: WireRules, at path: String) throws(WireViolation) { try rules.check(number: self, at: path) }
}

extension Date: WireValue {
    /// An RFC 3339 time, as `JSONCoding`'s date strategy writes it.
    @inlinable public func writeJSON(to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        RFC3339.append(self, to: &out)
        out.append(UInt8(ascii: "\""))
    }
    @inlinable public static func read(from reader: inout JSONFastReader) -> Date? { reader.time() }
    public static var wireSchema: WireSchema { .string(format: "date-time") }
}

extension JSONValue: WireValue {
    public func writeJSON(to out: inout [UInt8]) {
        switch self {
        case .null: out.append(contentsOf: "null".utf8)
        case .bool(let value): value.writeJSON(to: &out)
        case .number(let number):
            // The rule of `encode(to:)`: whole numbers that a Double holds exactly print as integers.
            if number.rounded() == number, abs(number) < 9.007_199_254_740_992e15, let whole = Int64(exactly: number) {
                out.append(contentsOf: String(whole).utf8)
            } else {
                JSONText.appendNumber(number, to: &out)
            }
        case .string(let text): JSONText.appendQuoted(text, to: &out)
        case .array(let elements): elements.writeJSON(to: &out)
        case .object(let members): members.writeJSON(to: &out)
        }
    }

    @inlinable public static func read(from reader: inout JSONFastReader) -> JSONValue? { reader.jsonValue() }
    public static var wireSchema: WireSchema { .any }
}

extension Array: WireValue where Element: WireValue {
    @inlinable public func writeJSON(to out: inout [UInt8]) {
        JSONText.appendArray(self, to: &out) { $0.writeJSON(to: &$1) }
    }
    @inlinable public static func read(from reader: inout JSONFastReader) -> [Element]? { reader.elements { Element.read(from: &$0) } }
    public static var wireSchema: WireSchema { .array(Element.wireSchema) }
    public func check(_ rules: WireRules, at path: String) throws(WireViolation) { try rules.check(count: count, at: path) }
    public func validate(at path: String) throws(WireViolation) {
        for (index, element) in enumerated() {
            do throws(WireViolation) { try element.validate(at: "") } catch { throw error.within("\(path)[\(index)]") }
        }
    }
}

extension Array: JSONWritable where Element: WireValue {}
extension Array: JSONReadable where Element: WireValue {}

extension Dictionary: WireValue where Key == String, Value: WireValue {
    /// An object with its keys in `JSONCoding`'s order (UTF-8 byte order).
    public func writeJSON(to out: inout [UInt8]) {
        out.append(UInt8(ascii: "{"))
        let keys = self.keys.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        for (index, key) in keys.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            JSONText.appendQuoted(key, to: &out)
            out.append(UInt8(ascii: ":"))
            self[key]!.writeJSON(to: &out)
        }
        out.append(UInt8(ascii: "}"))
    }

    public static func read(from reader: inout JSONFastReader) -> [String: Value]? {
        var members: [String: Value] = [:]
        let read = reader.object { reader, key in
            guard members[key] == nil, let value = Value.read(from: &reader) else { return false }
            members[key] = value
            return true
        }
        return read ? members : nil
    }

    public static var wireSchema: WireSchema { .map(Value.wireSchema) }

    public func validate(at path: String) throws(WireViolation) {
        for (key, value) in self {
            do throws(WireViolation) { try value.validate(at: "") } catch { throw error.within(path.isEmpty ? key : path + "." + key) }
        }
    }
}

extension Dictionary: JSONWritable where Key == String, Value: WireValue {}
extension Dictionary: JSONReadable where Key == String, Value: WireValue {}

extension WireSchema {
    /// The schema of `type` (how `@WireModel` names a member's type).
    @inlinable public static func of<Value: WireValue>(_ type: Value.Type) -> WireSchema { Value.wireSchema }
}
