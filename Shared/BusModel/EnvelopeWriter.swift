import Foundation
import Synchronization
import Wire

/// Event ids: unique per process, cheap, and not to be guessed. CloudEvents asks that `source` +
/// `id` be unique; a random prefix drawn once per process plus a counter is, and costs nanoseconds —
/// Foundation's `UUID()` opens /dev/urandom on every call on Linux (measured: 13% of a busy
/// publisher thread). A tag keyed by a secret of the process follows the counter: subscribers tell a
/// copy from a forgery by its id (`SequenceTracker`), so whoever saw one id must not be able to
/// name the next one and have the genuine event taken for a copy of theirs.
public enum EventID {
    private static let prefix: String = {
        var generator = SystemRandomNumberGenerator()
        return String(generator.next() as UInt64, radix: 36) + "-" + String(generator.next() as UInt32, radix: 36) + "-"
    }()
    private static let secret: (UInt64, UInt64) = {
        var generator = SystemRandomNumberGenerator()
        return (generator.next(), generator.next())
    }()
    private static let counter = Atomic<UInt64>(0)

    public static func next() -> String {
        let count = counter.add(1, ordering: .relaxed).newValue
        // SipHash, keyed by the process's random seed, over a secret and the count.
        var hasher = Hasher()
        hasher.combine(secret.0)
        hasher.combine(count)
        hasher.combine(secret.1)
        return prefix + String(count, radix: 36) + "-" + String(UInt64(bitPattern: Int64(hasher.finalize())), radix: 36)
    }
}

/// Writes a CloudEvent's JSON around data that is already encoded.
///
/// Publishers encode `data` with `JSONEncoder` (outside any lock) and wrap it here: the envelope's
/// attributes are plain strings, so writing them by hand costs a fraction of a second encoder pass
/// and lets the sequence be stamped at the last moment, in send order. The output decodes with
/// `CloudEvent.decode` (tested).
public enum EnvelopeWriter {
    public static func write(
        id: String, source: String, type: String, time: Date, sequence: UInt64, data: [UInt8], trace: TraceHeaders? = nil
    ) -> [UInt8] {
        var out = [UInt8]()
        out.reserveCapacity(160 + id.utf8.count + source.utf8.count + type.utf8.count + data.count)
        out.append(contentsOf: #"{"specversion":"1.0","id":"#.utf8)
        JSONText.appendQuoted(id, to: &out)
        out.append(contentsOf: #","source":"#.utf8)
        JSONText.appendQuoted(source, to: &out)
        out.append(contentsOf: #","type":"#.utf8)
        JSONText.appendQuoted(type, to: &out)
        out.append(contentsOf: #","time":""#.utf8)
        RFC3339.append(time, to: &out)
        out.append(contentsOf: #"","sequence":""#.utf8)
        out.append(contentsOf: String(sequence).utf8)
        out.append(UInt8(ascii: "\""))
        if let trace {
            out.append(contentsOf: #","traceparent":"#.utf8)
            JSONText.appendQuoted(trace.traceparent, to: &out)
            if let tracestate = trace.tracestate {
                out.append(contentsOf: #","tracestate":"#.utf8)
                JSONText.appendQuoted(tracestate, to: &out)
            }
        }
        out.append(contentsOf: #","datacontenttype":"application/json","data":"#.utf8)
        out.append(contentsOf: data)
        out.append(UInt8(ascii: "}"))
        return out
    }
}
