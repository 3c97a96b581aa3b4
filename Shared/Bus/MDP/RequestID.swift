import ZeroMQ

/// The correlation line of a multiplexed request: `r<decimal id>`, then, when the request is
/// traced, ` <traceparent>` and optionally ` <tracestate>`, ended by a newline (docs/design.md,
/// 7/MDP). `MDPClient` writes it ahead of a correlated request's first body frame; a worker that
/// follows our body convention (`OpRouter`) writes it back ahead of its reply, so the replies on
/// one connection can be matched to their requests.
///
/// It sits inside the body, not in a frame of its own, because a secured bus seals every frame on
/// its own: a frame fewer each way on each of a request's four hops. `r` and digits never begin an
/// op or a status; a newline occurs in neither W3C value, a space not in a `traceparent` (a
/// `tracestate`, last, may hold spaces).
enum RequestID {
    static let lineEnd = UInt8(ascii: "\n")
    static let space = UInt8(ascii: " ")
    /// An id of 20 digits and both W3C values at their limits: a longer line is not ours.
    static let maxLineLength = 24 + TraceHeaders.maxTraceparentLength + TraceHeaders.maxTracestateLength

    /// The line, its newline included.
    static func line(_ id: UInt64, trace: TraceHeaders? = nil) -> [UInt8] {
        var text = "r\(id)"
        if let trace { text += " \(trace.traceparent)" + (trace.tracestate.map { " \($0)" } ?? "") }
        return Array((text + "\n").utf8)
    }

    /// `body` with the line written ahead of its first frame (an empty body becomes the line alone).
    static func prefixed(_ body: [Frame], id: UInt64, trace: TraceHeaders?) -> [Frame] {
        var first = line(id, trace: trace)
        guard let head = body.first else { return [first] }
        first.append(contentsOf: head)
        return [first] + body.dropFirst()
    }

    /// The correlation line `frame` starts with, without its newline; nil when it starts with none.
    static func line(in frame: Frame) -> ArraySlice<UInt8>? {
        guard frame.first == UInt8(ascii: "r"),
            let end = frame.prefix(maxLineLength).firstIndex(of: lineEnd),
            parse(frame[..<end]) != nil
        else { return nil }
        return frame[..<end]
    }

    /// The id a line (without its newline) carries.
    static func parse(_ line: ArraySlice<UInt8>) -> UInt64? {
        let id = line.prefix { $0 != space }
        guard id.count >= 2, id.count <= 21, id.first == UInt8(ascii: "r"),
            id.dropFirst().allSatisfy({ $0 >= 48 && $0 <= 57 })
        else { return nil }
        return UInt64(String(decoding: id.dropFirst(), as: UTF8.self))
    }

    /// A reply's id and its body with the line taken off; nil when the reply starts with no line.
    static func split(_ body: [Frame]) -> (id: UInt64, body: [Frame])? {
        guard let first = body.first, let line = line(in: first), let id = parse(line) else { return nil }
        return (id, [Array(first[(line.endIndex + 1)...])] + body.dropFirst())
    }

    /// The trace context a line carries; nil when none, or malformed (a new trace starts).
    static func trace(in line: ArraySlice<UInt8>) -> TraceHeaders? {
        let parts = line.split(separator: space, maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count >= 2 else { return nil }
        return TraceHeaders(
            traceparent: String(decoding: parts[1], as: UTF8.self),
            tracestate: parts.count == 3 ? String(decoding: parts[2], as: UTF8.self) : nil)
    }
}
