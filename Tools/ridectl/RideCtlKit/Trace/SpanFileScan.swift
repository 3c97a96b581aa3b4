import Foundation
import Wire

/// Reads of a large `spans.jsonl` that decode only the lines of one ride: a platform traced for an
/// hour writes hundreds of thousands of spans, and decoding every line took seconds.
extension SpanFile {
    /// The spans of `orderID`'s traces and its trips' traces (what `SpanTimelineBuilder` looks
    /// at), from the file at `path`.
    public static func read(path: String, orderID: String) throws -> Contents {
        ride(in: [UInt8](try Data(contentsOf: URL(fileURLWithPath: path))), orderID: orderID)
    }

    /// A line is found by its text first (the order's or a trip's id in quotes, its `trace_id`), then
    /// decoded and checked. Lines without a trace id, and lines decoded but not spans, are counted
    /// as malformed.
    public static func ride(in bytes: [UInt8], orderID: String) -> Contents {
        var lines: [(range: Range<Int>, trace: String?)] = []
        var start = 0
        while start < bytes.count {
            let end = bytes[start...].firstIndex(of: UInt8(ascii: "\n")) ?? bytes.count
            if bytes[start..<end].contains(where: { $0 != UInt8(ascii: " ") && $0 != UInt8(ascii: "\r") }) {
                lines.append((start..<end, traceID(in: bytes[start..<end])))
            }
            start = end + 1
        }
        var malformed = lines.filter { $0.trace == nil }.count
        var decoded: [Int: Span] = [:]
        var failed: Set<Int> = []
        func span(_ index: Int) -> Span? {
            if let span = decoded[index] { return span }
            guard !failed.contains(index) else { return nil }
            guard let span = try? JSONCoding.decode(Span.self, from: Array(bytes[lines[index].range])) else {
                failed.insert(index)
                malformed += 1
                return nil
            }
            decoded[index] = span
            return span
        }
        func spans(mentioning text: String) -> [Span] {
            let needle = Array("\"\(text)\"".utf8)
            return lines.indices.filter { lines[$0].trace != nil && contains(bytes[lines[$0].range], needle) }.compactMap(span)
        }
        func spans(of traces: Set<String>) -> [Span] {
            lines.indices.filter { lines[$0].trace.map(traces.contains) == true }.compactMap(span)
        }
        var traces = Set(spans(mentioning: orderID).filter { $0.attributes[Span.Attribute.orderID] == orderID }.map(\.traceID))
        let trips = Set(spans(of: traces).compactMap { $0.attributes[Span.Attribute.tripID] })
        for trip in trips {
            traces.formUnion(spans(mentioning: trip).filter { $0.attributes[Span.Attribute.tripID] == trip }.map(\.traceID))
        }
        return Contents(spans: traces.isEmpty ? [] : spans(of: traces), malformedLines: malformed)
    }

    /// The `trace_id` of a line as the collector writes it, found without decoding the line.
    static func traceID(in line: ArraySlice<UInt8>) -> String? {
        let key = Array(#""trace_id":""#.utf8)
        guard let found = firstIndex(of: key, in: line) else { return nil }
        let idStart = found + key.count
        guard let idEnd = line[idStart...].firstIndex(of: UInt8(ascii: "\"")), idEnd - idStart == 32 else { return nil }
        return String(decoding: line[idStart..<idEnd], as: UTF8.self)
    }

    static func contains(_ haystack: ArraySlice<UInt8>, _ needle: [UInt8]) -> Bool { firstIndex(of: needle, in: haystack) != nil }

    /// Where `needle` starts in `haystack`: memchr to each candidate first byte, then memcmp (this
    /// runs over every line of the file).
    static func firstIndex(of needle: [UInt8], in haystack: ArraySlice<UInt8>) -> Int? {
        guard let first = needle.first, haystack.count >= needle.count else { return nil }
        return haystack.withUnsafeBytes { hay -> Int? in
            needle.withUnsafeBytes { pin -> Int? in
                guard let base = hay.baseAddress, let pattern = pin.baseAddress else { return nil }
                var offset = 0
                while offset + pin.count <= hay.count {
                    guard let candidate = memchr(base + offset, Int32(first), hay.count - offset - pin.count + 1) else { return nil }
                    let at = base.distance(to: UnsafeRawPointer(candidate))
                    if memcmp(base + at, pattern, pin.count) == 0 { return haystack.startIndex + at }
                    offset = at + 1
                }
                return nil
            }
        }
    }
}
