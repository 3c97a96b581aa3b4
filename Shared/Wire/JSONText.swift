/// The pieces every hand-off to bytes shares: numbers, strings and arrays written as `JSONCoding`
/// (Foundation's `JSONEncoder` with sorted keys) writes them.
public enum JSONText {
    /// Appends a number as JSON: whole values without a fraction (`5`, not `5.0`), others in Swift's
    /// shortest round-trip form. Non-finite values (which JSON cannot hold) are written as `null`.
    public static func appendNumber(_ value: Double, to out: inout [UInt8]) {
        guard value.isFinite else {
            out.append(contentsOf: "null".utf8)
            return
        }
        if value.rounded() == value, abs(value) < 1e15 {
            out.append(contentsOf: String(Int64(value)).utf8)
        } else {
            // As JSONEncoder writes a Double: shortest round-trip digits, no ".0" on whole numbers.
            let digits = value.description
            out.append(contentsOf: digits.hasSuffix(".0") ? digits.utf8.dropLast(2) : digits.utf8[...])
        }
    }

    /// Appends `text` as a JSON string literal, escaping what RFC 8259 requires.
    public static func appendQuoted(_ text: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        // Most strings (ids, topics, names) need no escaping: copy them whole, scanned as the
        // contiguous bytes a native string keeps (the UTF-8 view's iterator is slower).
        let copied = text.utf8.withContiguousStorageIfAvailable { bytes in
            for byte in bytes where byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") { return false }
            out.append(contentsOf: bytes)
            return true
        }
        if copied == true {
            out.append(UInt8(ascii: "\""))
            return
        }
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): out.append(contentsOf: [92, 34])
            case UInt8(ascii: "\\"): out.append(contentsOf: [92, 92])
            case 0x0A: out.append(contentsOf: [92, UInt8(ascii: "n")])
            case 0x0D: out.append(contentsOf: [92, UInt8(ascii: "r")])
            case 0x09: out.append(contentsOf: [92, UInt8(ascii: "t")])
            case 0x08: out.append(contentsOf: [92, UInt8(ascii: "b")])
            case 0x0C: out.append(contentsOf: [92, UInt8(ascii: "f")])
            case 0..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                out.append(contentsOf: [92, UInt8(ascii: "u"), 48, 48, hex[Int(byte >> 4)], hex[Int(byte & 0xF)]])
            default: out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
    }

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
