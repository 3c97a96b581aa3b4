import Bus
import Foundation
import GRDB
import Logging
import ServiceLifecycle

/// Sends a service's outbox to the bus in sequence order and marks what was sent. Woken by
/// `notify()` after each commit (so an event leaves within the commit's own latency), and every
/// second anyway (so rows left by a crash or a failed send go out without a new commit).
public final class OutboxRelay: Service, Sendable {
    private let database: any DatabaseWriter
    private let publisher: EventPublisher
    private let source: String
    private let logger: Logger
    private let loop = WakeupLoop()

    public init(database: any DatabaseWriter, publisher: EventPublisher, source: String, logger: Logger) {
        self.database = database
        self.publisher = publisher
        self.source = source
        self.logger = logger
    }

    /// Something was appended: send it now.
    public func notify() { loop.notify() }

    public func run() async throws {
        await loop.run(tick: .seconds(1)) { await drain() }
        await drain()  // what the last requests appended
    }

    /// Sends every unpublished row; returns when none is left or sending fails (retried on the next wake-up).
    public func drain() async {
        while true {
            do {
                let batch = try await database.read { db in try Outbox.unpublished(db) }
                guard let last = batch.last else { return }
                for event in batch {
                    try publisher.publish(topic: event.topic, encodedEvent: event.envelope(source: source))
                }
                try await database.write { db in try Outbox.markPublished(db, through: last.sequence) }
            } catch {
                logger.error("outbox relay: sending failed; will retry", metadata: ["error": "\(error)"])
                return
            }
        }
    }
}
