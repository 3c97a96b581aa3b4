import Bus
import Foundation
import Logging
import Synchronization
import ZeroMQ

/// Writes tracking's changes in group commits, then publishes their events, then says they are done.
///
/// Order matters: an event is published only once what it reports is stored (so a sequence the bus
/// has seen is never reused after a crash), and a batch is acknowledged only once stored (so the SDK
/// forgets only what survives a crash). One thread does it, taking everything queued at each turn —
/// a busy ingest turns into few, large transactions.
public final class StoreWriter: Sendable {
    public struct Job: Sendable {
        public var writes: [TrackingWrite]
        public var events: [DeviceEvent]
        /// Called after the commit (and the publishing), on the writer's thread: keep it short.
        public var completion: (@Sendable (Result<Void, any Error>) -> Void)?

        public init(writes: [TrackingWrite], events: [DeviceEvent], completion: (@Sendable (Result<Void, any Error>) -> Void)? = nil) {
            self.writes = writes
            self.events = events
            self.completion = completion
        }
    }

    public struct Stats: Sendable {
        public var commits: UInt64 = 0
        public var failedCommits: UInt64 = 0
        public var writtenLocations: UInt64 = 0
        public var publishedEvents: UInt64 = 0
    }

    /// What the submitting tasks and the writer's thread share.
    private final class Shared: Sendable {
        let jobs = Mailbox<Job>()
        let stop = StopFlag()
        let stats = Mutex(Stats())
        /// Locations submitted and not yet written: ingest stops reading when this grows too big.
        let backlog = Atomic<Int>(0)
    }

    private let shared = Shared()
    private let thread: OwnedThread

    /// - Parameters:
    ///   - commitInterval: under a heavy load, the shortest time between two commits. Committing
    ///     whenever anything was queued made a heavy load expensive: many small transactions, each
    ///     with its own page writes, event burst and wake-ups (measured at 50 000 loc/s in batches
    ///     of 5: 21 µs of CPU per location with no wait, 14 µs with 20 ms, no better with 50 or
    ///     100 ms). Acknowledgements and events wait that long at most.
    ///   - pacedAboveRate: locations per second (over the last second) above which commits are
    ///     paced. Below it every commit starts at once, because callers that wait for their
    ///     acknowledgement before sending more (the `ingest` op: 8 at a time per worker) would
    ///     otherwise be held to `concurrency ÷ commitInterval` batches a second (400/s).
    public init(
        store: any TrackingStore, publisher: EventPublisher, logger: Logger,
        commitInterval: Duration = .milliseconds(20), pacedAboveRate: Int = 20_000
    ) {
        let shared = self.shared
        let interval = UInt64(commitInterval.milliseconds) * 1_000_000
        thread = OwnedThread(name: "tracking-writer", priority: .throughput) {
            var poller = Poller()
            poller.add(fileDescriptor: shared.jobs.waker.fileDescriptor)
            var lastCommit: UInt64 = 0
            var rate = CommitRate(pacedAbove: pacedAboveRate)
            while true {
                var batch = shared.jobs.take()
                if batch.isEmpty {
                    if shared.stop.isRequested { return }
                    _ = try? poller.poll(timeoutMilliseconds: 250)
                    continue
                }
                let now = MonotonicClock.nanoseconds()
                if rate.isHeavy(now: now), now - lastCommit < interval, !shared.stop.isRequested {
                    usleep(UInt32((interval - (now - lastCommit)) / 1000))
                    batch += shared.jobs.take()
                }
                lastCommit = MonotonicClock.nanoseconds()
                rate.count(Self.write(batch, store: store, publisher: publisher, shared: shared, logger: logger), now: lastCommit)
            }
        }
    }

    /// Locations written per one-second window; a load is heavy when the last whole window was.
    struct CommitRate {
        let pacedAbove: Int
        private var windowStart: UInt64 = 0
        private var inWindow = 0
        private var lastWindow = 0

        init(pacedAbove: Int) { self.pacedAbove = pacedAbove }

        mutating func count(_ locations: Int, now: UInt64) {
            roll(now: now)
            inWindow += locations
        }

        mutating func isHeavy(now: UInt64) -> Bool {
            roll(now: now)
            return lastWindow > pacedAbove
        }

        private mutating func roll(now: UInt64) {
            let second: UInt64 = 1_000_000_000
            guard now - windowStart >= second else { return }
            // A window with no commits at its end means the load stopped: it counts as light.
            lastWindow = now - windowStart < 2 * second ? inWindow : 0
            windowStart = now
            inWindow = 0
        }
    }

    /// Returns the number of locations written.
    private static func write(_ batch: [Job], store: any TrackingStore, publisher: EventPublisher, shared: Shared, logger: Logger) -> Int {
        let writes = batch.flatMap(\.writes)
        let result: Result<Void, any Error>
        do {
            try store.commit(writes)
            result = .success(())
        } catch {
            logger.error(
                "commit failed; nothing of it is published or acknowledged", metadata: ["error": "\(error)", "writes": "\(writes.count)"])
            result = .failure(error)
        }
        var published: UInt64 = 0
        if case .success = result {
            let events = batch.flatMap(\.events)
            do {
                try publisher.publish(encodedEvents: events.map { (topic: $0.topic, event: try DeviceEventEncoding.encode($0)) })
                published = UInt64(events.count)
            } catch {
                logger.error("publish failed", metadata: ["events": "\(events.count)", "error": "\(error)"])
            }
        }
        for job in batch { job.completion?(result) }
        let written = writes.reduce(0) { $0 + $1.locations.count }
        shared.backlog.subtract(written, ordering: .relaxed)
        let locations = UInt64(written)
        shared.stats.withLock { stats in
            if case .success = result {
                stats.commits += 1
                stats.writtenLocations += locations
            } else {
                stats.failedCommits += 1
            }
            stats.publishedEvents += published
        }
        return written
    }

    public func submit(_ job: Job) {
        shared.backlog.add(job.writes.reduce(0) { $0 + $1.locations.count }, ordering: .relaxed)
        shared.jobs.post(job)
    }

    /// Locations submitted and not yet written.
    public var backlog: Int { shared.backlog.load(ordering: .relaxed) }

    /// Submits and waits until the job is stored (and its events published).
    public func write(_ writes: [TrackingWrite], events: [DeviceEvent]) async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            submit(Job(writes: writes, events: events) { continuation.resume(with: $0) })
        }
    }

    public var statistics: Stats { shared.stats.withLock { $0 } }

    /// Writes what is queued, then stops.
    public func close() async {
        shared.stop.request()
        shared.jobs.waker.wake()
        await thread.join()
    }
}
