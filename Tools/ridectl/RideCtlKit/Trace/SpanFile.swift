import Foundation
import Wire

/// `spans.jsonl`: one compact JSON `Span` per line, appended by the collector, read by
/// `ridectl trace`.
public enum SpanFile {
    /// The spans of a file, and how many of its lines were not spans (skipped).
    public struct Contents: Sendable, Equatable {
        public var spans: [Span]
        public var malformedLines: Int
    }

    /// Where `ridectl up --traces` keeps them: `<data dir>/spans.jsonl`.
    public static func defaultPath(dataDirectory: String) -> String { dataDirectory + "/spans.jsonl" }

    public static func read(path: String) throws -> Contents {
        parse(try Data(contentsOf: URL(fileURLWithPath: path)))
    }

    /// Every line that decodes as a span; blank lines are ignored, other lines counted as malformed.
    public static func parse(_ data: Data) -> Contents {
        var contents = Contents(spans: [], malformedLines: 0)
        for line in data.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: true) {
            if line.allSatisfy({ $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\r") }) { continue }
            if let span = try? JSONCoding.decode(Span.self, from: Array(line)) {
                contents.spans.append(span)
            } else {
                contents.malformedLines += 1
            }
        }
        return contents
    }

    /// The spans as the lines of the file, each ending in a newline.
    public static func lines(_ spans: [Span]) throws -> Data {
        var data = Data()
        for span in spans {
            data.append(contentsOf: try JSONCoding.encode(span))
            data.append(UInt8(ascii: "\n"))
        }
        return data
    }
}

/// Appends spans to a file, one request's spans in one write (so a reader never sees half a line
/// of a request, and a failed request leaves nothing).
public actor SpanFileWriter {
    public let path: String
    private let handle: FileHandle
    public private(set) var written = 0

    public init(path: String) throws {
        self.path = path
        let directory = URL(fileURLWithPath: path).deletingLastPathComponent().path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        if !FileManager.default.fileExists(atPath: path) {
            guard FileManager.default.createFile(atPath: path, contents: nil) else { throw SpanFileError("cannot create \(path)") }
        }
        guard let handle = FileHandle(forWritingAtPath: path) else { throw SpanFileError("cannot open \(path) for writing") }
        self.handle = handle
    }

    public func append(_ spans: [Span]) throws {
        guard !spans.isEmpty else { return }
        let data = try SpanFile.lines(spans)
        try handle.seekToEnd()
        try handle.write(contentsOf: data)
        written += spans.count
    }

    deinit { try? handle.close() }
}

public struct SpanFileError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
