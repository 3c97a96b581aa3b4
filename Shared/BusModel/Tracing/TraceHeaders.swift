import Tracing

/// W3C trace context (`traceparent` and `tracestate`) as it travels between processes: on an
/// event (the CloudEvents distributed-tracing extension attributes), in a 7/MDP request's id
/// frame, in an outbox row and in HTTP headers (docs/tracing.md).
///
/// Only well-formed values exist: `init(traceparent:tracestate:)` is nil for a malformed or
/// oversized `traceparent` — the receiver then starts a new trace, it never refuses the message.
/// A malformed `tracestate` (vendor data, optional) is dropped while its `traceparent` is kept.
public struct TraceHeaders: Sendable, Equatable, Hashable {
    public let traceparent: String
    public let tracestate: String?

    /// W3C's limit on `tracestate` (32 members of up to 256 characters would be more; 512 is the
    /// length a propagator must accept, and what we keep).
    public static let maxTracestateLength = 512
    /// A `traceparent` of a version after 00 may be longer; we accept it up to here.
    public static let maxTraceparentLength = 256

    public init?(traceparent: String?, tracestate: String? = nil) {
        guard let traceparent, Self.isValid(traceparent: traceparent) else { return nil }
        self.traceparent = traceparent
        self.tracestate = tracestate.flatMap { Self.isValid(tracestate: $0) ? $0 : nil }
    }

    /// `00-<32 hex trace id>-<16 hex span id>-<2 hex flags>`, lowercase, ids not all zeros; a later
    /// version may add fields after a `-` (W3C: parse what this version knows); `ff` is invalid.
    public static func isValid(traceparent: String) -> Bool {
        let bytes = Array(traceparent.utf8)
        guard bytes.count >= 55, bytes.count <= maxTraceparentLength else { return false }
        func hex(_ range: Range<Int>) -> Bool { bytes[range].allSatisfy { ($0 >= 48 && $0 <= 57) || ($0 >= 97 && $0 <= 102) } }
        func zeros(_ range: Range<Int>) -> Bool { bytes[range].allSatisfy { $0 == 48 } }
        let dash = UInt8(ascii: "-")
        guard hex(0..<2), bytes[2] == dash, hex(3..<35), bytes[35] == dash, hex(36..<52), bytes[52] == dash, hex(53..<55) else {
            return false
        }
        guard !(bytes[0] == 102 && bytes[1] == 102), !zeros(3..<35), !zeros(36..<52) else { return false }
        let version00 = bytes[0] == 48 && bytes[1] == 48
        return version00 ? bytes.count == 55 : (bytes.count == 55 || bytes[55] == dash)
    }

    /// Printable ASCII, at most `maxTracestateLength` characters: what can be passed on unchanged.
    public static func isValid(tracestate: String) -> Bool {
        let bytes = tracestate.utf8
        return !bytes.isEmpty && bytes.count <= maxTracestateLength && bytes.allSatisfy { $0 >= 0x20 && $0 <= 0x7E }
    }

    /// The trace id (32 hex digits).
    public var traceID: Substring { traceparent.dropFirst(3).prefix(32) }
    /// The span id of the sender's span (16 hex digits): the parent of the receiver's.
    public var spanID: Substring { traceparent.dropFirst(36).prefix(16) }
}
