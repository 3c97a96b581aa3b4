/// A value that writes its own JSON — exactly what its `Encodable` conformance gives through
/// `JSONCoding` (sorted keys, absent optionals left out, RFC 3339 times) — for replies and events
/// on hot paths, where a `JSONEncoder` pass costs several times the work behind the value.
/// `JSONCoding.encode` prefers it. Models get it from `@WireModel`; the property test in
/// WireTests keeps every model's bytes equal to JSONEncoder's.
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

/// Writes one JSON object member by member; the members' order is the caller's (`@WireModel`
/// sorts them as JSONEncoder's `sortedKeys` does when it generates the calls).
public struct JSONObjectWriter {
    @usableFromInline var first = true

    @inlinable
    public init(_ out: inout [UInt8]) {
        out.append(UInt8(ascii: "{"))
    }

    /// Starts the member `key` (a plain ASCII key, written as is); the caller writes its value.
    @inlinable
    public mutating func key(_ key: StaticString, _ out: inout [UInt8]) {
        if !first { out.append(UInt8(ascii: ",")) }
        first = false
        out.append(UInt8(ascii: "\""))
        out.append(contentsOf: UnsafeBufferPointer(start: key.utf8Start, count: key.utf8CodeUnitCount))
        out.append(contentsOf: [UInt8(ascii: "\""), UInt8(ascii: ":")])
    }

    /// The member `key` with `value`; an absent optional writes nothing, as JSONEncoder leaves it out.
    @inlinable
    public mutating func member<Value: JSONWritable>(_ key: StaticString, _ value: Value?, _ out: inout [UInt8]) {
        guard let value else { return }
        self.key(key, &out)
        value.writeJSON(to: &out)
    }

    /// A member whose value is already JSON.
    @inlinable
    public mutating func raw(_ key: StaticString, _ json: [UInt8]?, _ out: inout [UInt8]) {
        guard let json else { return }
        self.key(key, &out)
        out.append(contentsOf: json)
    }

    @inlinable
    public func end(_ out: inout [UInt8]) {
        out.append(UInt8(ascii: "}"))
    }
}
