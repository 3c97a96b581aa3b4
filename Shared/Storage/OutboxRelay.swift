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
    private let wakeups: AsyncStream<Void>
    private let wake: AsyncStream<Void>.Continuation

    public init(database: any DatabaseWriter, publisher: EventPublisher, source: String, logger: Logger) {
        self.database = database
        self.publisher = publisher
        self.source = source
        self.logger = logger
        (wakeups, wake) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    /// Something was appended: send it now.
    public func notify() { wake.yield() }

    public func run() async throws {
        let ticker = Task { [wake] in
            while !Task.isCancelled {
                try? await Task.sleep(for: .seconds(1))
                wake.yield()
            }
        }
        defer { ticker.cancel() }
        wake.yield()
        await withGracefulShutdownHandler {
            for await _ in wakeups {
                await drain()
                if Task.isShuttingDownGracefully { break }
            }
        } onGracefulShutdown: { [wake] in
            wake.finish()
        }
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
