import Bus
import Foundation
import Logging
import ServiceLifecycle
import Storage
import Synchronization
import Tracing

/// Sends a service's outbox to the bus in sequence order and marks what was sent. Woken by
/// `notify()` after each commit (so an event leaves within the commit's own latency), and every
/// second anyway (so rows left by a crash or a failed send go out without a new commit).
public final class OutboxRelay: Service, Sendable {
    private let log: any EventLog
    private let publisher: EventPublisher
    private let source: String
    private let logger: Logger
    private let loop = WakeupLoop()
    /// The last pass's failure (nil: it read the outbox), and whether a pass ran at all.
    private let lastFailure = Mutex<String?>("no read of the outbox yet")
    static let batchLimit = 500

    public init(log: any EventLog, publisher: EventPublisher, source: String, logger: Logger) {
        self.log = log
        self.publisher = publisher
        self.source = source
        self.logger = logger
    }

    /// Something was appended: send it now.
    public func notify() { loop.notify() }

    /// Why the database is not ready, or nil: the relay reads the outbox at least every second, so
    /// its last read is a probe of the database that costs nothing extra (for `/readyz`).
    public var databaseProblem: String? { lastFailure.withLock { $0 } }

    public func run() async throws {
        await loop.run(tick: .seconds(1)) { await drain() }
        await drain()  // what the last requests appended
    }

    /// Sends every unpublished row; returns when none is left or sending fails (retried on the next wake-up).
    public func drain() async {
        let (publisher, source) = (self.publisher, self.source)
        var busyWaits = 0
        while true {
            do {
                let outcome = try await log.relayBatch(
                    limit: Self.batchLimit,
                    send: { batch in
                        // Each row's trace continues in a producer span, whose context the event
                        // carries; the batch is queued at once, with one wake of the publisher's thread.
                        let events = try batch.map { event in
                            try Trace.syncSpan("publish \(event.type)", kind: .producer, parent: event.trace) { span in
                                span?.set("ride.event_id", event.id)
                                span?.set("ride.event_type", event.type)
                                span?.set("messaging.destination.name", event.topic)
                                let trace = span.flatMap { Trace.headers(of: $0.context) }
                                return (topic: event.topic, event: try event.envelope(source: source, trace: trace))
                            }
                        }
                        try publisher.publish(encodedEvents: events)
                    })
                lastFailure.withLock { $0 = nil }
                switch outcome {
                case .sent(let count):
                    // A short batch took everything committed before it was read; what commits
                    // later notifies, which runs one more pass — so no read to find nothing.
                    guard count == Self.batchLimit else { return }
                    busyWaits = 0
                case .empty: return
                case .busy:
                    // Another instance is sending; what we appended may have committed after its
                    // batch was read, so look again shortly rather than at the next tick.
                    busyWaits += 1
                    guard busyWaits <= 100 else { return }
                    try await Task.sleep(for: .milliseconds(10))
                }
            } catch is CancellationError {
                return
            } catch {
                lastFailure.withLock { $0 = "the outbox cannot be read or sent: \(String(describing: error).prefix(200))" }
                logger.error("outbox relay: sending failed; will retry", metadata: ["error": "\(error)"])
                return
            }
        }
    }
}
