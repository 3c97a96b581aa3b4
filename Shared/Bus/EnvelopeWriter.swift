import Foundation

import Synchronization

/// Event ids: unique per process and cheap. CloudEvents asks that `source` + `id` be unique; a
/// random prefix drawn once per process plus a counter is, and costs nanoseconds — Foundation's
/// `UUID()` opens /dev/urandom on every call on Linux (measured: 13% of a busy publisher thread).
public enum EventID {
    private static let prefix: String = {
        var generator = SystemRandomNumberGenerator()
        return String(generator.next() as UInt64, radix: 36) + "-" + String(generator.next() as UInt32, radix: 36) + "-"
    }()
    private static let counter = Atomic<UInt64>(0)

    public static func next() -> String {
        prefix + String(counter.add(1, ordering: .relaxed).newValue, radix: 36)
    }
}

/// Writes a CloudEvent's JSON around data that is already encoded.
///
/// Publishers encode `data` with `JSONEncoder` (outside any lock) and wrap it here: the envelope's
/// attributes are plain strings, so writing them by hand costs a fraction of a second encoder pass
/// and lets the sequence be stamped at the last moment, in send order. The output decodes with
/// `CloudEvent.decode` (tested).
public enum EnvelopeWriter {
    public static func write(id: String, source: String, type: String, time: Date, sequence: UInt64, data: [UInt8]) -> [UInt8] {
        var out = [UInt8]()
        out.reserveCapacity(160 + id.utf8.count + source.utf8.count + type.utf8.count + data.count)
        out.append(contentsOf: #"{"specversion":"1.0","id":"#.utf8)
        appendQuoted(id, to: &out)
        out.append(contentsOf: #","source":"#.utf8)
        appendQuoted(source, to: &out)
        out.append(contentsOf: #","type":"#.utf8)
        appendQuoted(type, to: &out)
        out.append(contentsOf: #","time":""#.utf8)
        RFC3339.append(time, to: &out)
        out.append(contentsOf: #"","sequence":""#.utf8)
        out.append(contentsOf: String(sequence).utf8)
        out.append(contentsOf: #"","datacontenttype":"application/json","data":"#.utf8)
        out.append(contentsOf: data)
        out.append(UInt8(ascii: "}"))
        return out
    }

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
        // Most strings (ids, topics, names) need no escaping: copy them whole.
        if text.utf8.allSatisfy({ $0 >= 0x20 && $0 != UInt8(ascii: "\"") && $0 != UInt8(ascii: "\\") }) {
            out.append(contentsOf: text.utf8)
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
}
