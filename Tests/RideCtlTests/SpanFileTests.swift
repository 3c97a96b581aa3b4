import Foundation
import Testing
import Wire

@testable import RideCtlKit

/// `spans.jsonl`: written a request at a time, read back skipping what is not a span.
@Suite struct SpanFileTests {
    @Test func spansSurviveTheFileExactlyNanosecondsIncluded() throws {
        let data = try SpanFile.lines(RideTraceFixture.spans)
        #expect(data.split(separator: UInt8(ascii: "\n")).count == RideTraceFixture.spans.count)
        let contents = SpanFile.parse(data)
        #expect(contents.malformedLines == 0)
        #expect(contents.spans == RideTraceFixture.spans)
        #expect(contents.spans.first?.start == 1_764_064_800_000_000_000)
    }

    @Test func malformedLinesAreCountedAndSkipped() throws {
        var data = try SpanFile.lines(Array(RideTraceFixture.spans.prefix(2)))
        data.append(contentsOf: Array("not json\n\n{\"trace_id\":\"a\"}\n   \n[1,2]\n".utf8))
        data.append(contentsOf: try SpanFile.lines(Array(RideTraceFixture.spans.suffix(1))))
        data.append(contentsOf: Array("{\"half\":".utf8))  // a line cut short by a crash
        let contents = SpanFile.parse(data)
        #expect(contents.spans.count == 3)
        #expect(contents.malformedLines == 4)
    }

    @Test func theWriterAppends() async throws {
        let path = NSTemporaryDirectory() + "spans-\(UUID().uuidString)/spans.jsonl"
        defer { try? FileManager.default.removeItem(atPath: URL(fileURLWithPath: path).deletingLastPathComponent().path) }
        let writer = try SpanFileWriter(path: path)
        try await writer.append(Array(RideTraceFixture.spans.prefix(3)))
        try await writer.append([])
        try await writer.append(Array(RideTraceFixture.spans.dropFirst(3)))
        #expect(try SpanFile.read(path: path).spans == RideTraceFixture.spans)
        let again = try SpanFileWriter(path: path)  // a restarted collector appends
        try await again.append(Array(RideTraceFixture.spans.prefix(1)))
        #expect(try SpanFile.read(path: path).spans.count == RideTraceFixture.spans.count + 1)
    }

    @Test func readingOneRideDecodesItsTracesAndItsTripsOnly() throws {
        var data = try SpanFile.lines(RideTraceFixture.spans)
        data.append(contentsOf: Array("garbage\n{\"trace_id\":\"\(RideTraceFixture.booking)\",\"broken\n".utf8))
        let ride = SpanFile.ride(in: [UInt8](data), orderID: RideTraceFixture.orderID)
        #expect(
            Set(ride.spans.map(\.traceID)) == [RideTraceFixture.booking, RideTraceFixture.acceptance, RideTraceFixture.watch],
            "not the other order's trace")
        #expect(ride.spans.count == RideTraceFixture.spans.count - 2)
        #expect(ride.malformedLines == 2, "the line without a trace id, and the booking's line that is not a span")
        let whole = SpanTimelineBuilder(spans: SpanFile.parse(data).spans).timeline(orderID: RideTraceFixture.orderID)
        #expect(
            SpanTimelineBuilder(spans: ride.spans).timeline(orderID: RideTraceFixture.orderID) == whole,
            "the same timeline as from every span")
        #expect(SpanFile.ride(in: [UInt8](data), orderID: "o-4").spans.isEmpty, "an id that is the start of another is not it")
        #expect(SpanFile.ride(in: [], orderID: RideTraceFixture.orderID) == SpanFile.Contents(spans: [], malformedLines: 0))
    }
}
