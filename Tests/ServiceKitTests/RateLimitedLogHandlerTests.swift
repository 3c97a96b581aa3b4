import Foundation
import Logging
import Synchronization
import Testing

@testable import ServiceKit

/// The span exporter's complaints about an unreachable collector: at most one warning per
/// interval, with the number held back (docs/tracing.md).
@Suite struct RateLimitedLogHandlerTests {
    /// Keeps each record as `level message held_back`.
    struct Recorder: LogHandler {
        final class Lines: Sendable { let lines = Mutex<[String]>([]) }
        let kept = Lines()
        var logLevel: Logger.Level = .trace
        var metadata: Logger.Metadata = [:]
        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }
        func log(event: LogEvent) {
            let held = event.metadata?["held_back"].map { "\($0)" } ?? "-"
            kept.lines.withLock { $0.append("\(event.level) \(event.message) \(held)") }
        }
        var lines: [String] { kept.lines.withLock { $0 } }
    }

    @Test func warningsPassOncePerIntervalAndSayHowManyWereHeldBack() async throws {
        let recorder = Recorder()
        var logger = Logger(label: "otel")
        logger.handler = RateLimitedLogHandler(wrapping: recorder, interval: .milliseconds(300))
        for _ in 0..<4 { logger.warning("export failed") }
        logger.info("exporting")
        logger.error("export failed")
        #expect(recorder.lines == ["warning export failed -", "info exporting -"])
        try await Task.sleep(for: .milliseconds(400))
        logger.warning("export failed")
        #expect(recorder.lines.last == "warning export failed 4", "three warnings and an error held back")
    }
}
