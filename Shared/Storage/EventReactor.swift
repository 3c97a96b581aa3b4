import Bus
import Foundation
import GRDB
import Logging
import ServiceLifecycle
import Synchronization
import Tracing
import Wire

/// Where a reactor keeps, per source, the sequence up to which every event has been handled.
public protocol ReactorCursors: Sendable {
    /// The last sequence of `source` handled in full (0 at first).
    func reactorCursor(source: String) async throws -> UInt64
    func saveReactorCursor(source: String, sequence: UInt64) async throws
}

/// A store whose database has the `reactor_cursors` table: the two methods come with it.
public protocol DatabaseReactorCursors: ReactorCursors {
    var database: DatabasePool { get }
}

extension DatabaseReactorCursors {
    public func reactorCursor(source: String) async throws -> UInt64 { try await ReactorCursorTable.cursor(database, source: source) }
    public func saveReactorCursor(source: String, sequence: UInt64) async throws { try await ReactorCursorTable.save(database, source: source, sequence: sequence) }
}

/// The `reactor_cursors` table a service's migration creates with `ReactorCursorTable.sql`.
public enum ReactorCursorTable {
    public static let sql = "CREATE TABLE reactor_cursors (source TEXT PRIMARY KEY NOT NULL, sequence INTEGER NOT NULL);"

    public static func cursor(_ database: some DatabaseReader, source: String) async throws -> UInt64 {
        try await database.read { db in UInt64(try db.value(Int64.self, "SELECT sequence FROM reactor_cursors WHERE source = ?", [source]) ?? 0) }
    }

    public static func save(_ database: some DatabaseWriter, source: String, sequence: UInt64) async throws {
        try await database.write { db in
            try db.run(
                "INSERT INTO reactor_cursors (source, sequence) VALUES (?, ?) ON CONFLICT (source) DO UPDATE SET sequence = excluded.sequence",
                [source, Int64(sequence)])
        }
    }
}

/// A consumer of other services' events that misses none — the Cloud Function trigger without
/// its gaps. It keeps, per source, the sequence up to which every event has been handled (a
/// `Watermark`, stored). On start it first catches up through the sources' `events` op, and when
/// a sequence gap shows on the bus it fetches the missing events the same way before going on.
/// Handlers run concurrently (one task per event) and must be idempotent: an event seen twice
/// (after a restart, or repeated by the bus) is handled twice. Events with the same `orderingKey`
/// (say, of one order) are handled one after another, in the order they came.
public struct EventReactor<Payload: Decodable & Sendable>: Service {
    public typealias Fetch = @Sendable (_ source: String, _ after: UInt64, _ limit: Int) async throws -> EventsPage
    public typealias Handle = @Sendable (CloudEvent<Payload>) async -> Void

    let name: String
    let sources: [String]
    let cursors: any ReactorCursors
    let subscriber: EventSubscriber<Payload>
    let fetch: Fetch
    let handle: Handle
    let orderingKey: (@Sendable (CloudEvent<Payload>) -> String?)?
    let logger: Logger
    private let chains = KeyedChains()

    /// - Parameters:
    ///   - sources: the sources whose every event is handled; subscribe to all their topics, or a
    ///     topic not subscribed to looks like a gap.
    ///   - fetch: a source's `events` op (paged).
    ///   - orderingKey: events with the same key are handled in order (nil: no order kept).
    ///   - service: the reacting service, for the handlers' spans (`react <service> <event type>`,
    ///     continuing the event's trace); `name` when not given.
    public init(
        name: String, service: String? = nil, sources: [String], cursors: any ReactorCursors, subscriber: EventSubscriber<Payload>, logger: Logger,
        orderingKey: (@Sendable (CloudEvent<Payload>) -> String?)? = nil, fetch: @escaping Fetch, handle: @escaping Handle
    ) {
        self.orderingKey = orderingKey
        self.name = name
        self.sources = sources
        self.cursors = cursors
        self.subscriber = subscriber
        self.fetch = fetch
        let service = service ?? name
        self.handle = { event in
            await Trace.span("react \(service) \(event.type)", kind: .consumer, parent: event.trace) { span in
                if let span {
                    span.set("ride.event_id", event.id)
                    span.set("ride.event_type", event.type)
                    span.set("ride.order_id", orderingKey?(event))
                    span.describe(event.data)
                }
                await handle(event)
            }
        }
        self.logger = logger
    }

    public func run() async throws {
        let progress = ReactorProgress(cursors: cursors)
        await withDiscardingTaskGroup { group in
            // Catch up before following the bus: the subscription is already open, so nothing
            // published meanwhile is lost; what is seen twice is handled twice, harmlessly.
            for source in sources {
                let after = (try? await cursors.reactorCursor(source: source)) ?? 0
                await progress.start(source: source, after: after)
                subscriber.expect(source: source, after: await fetchMissing(source: source, after: after, into: &group, progress: progress))
            }
            await withGracefulShutdownHandler {
                for await batch in subscriber.deliveries {
                    for case .event(let received) in batch {
                        let source = received.event.source
                        guard sources.contains(source) else { continue }
                        switch received.sequence {
                        case .duplicate: continue
                        case .gap(let gap):
                            logger.warning("\(name): sequence gap; fetching the missed events", metadata: ["gap": "\(gap)"])
                            _ = await fetchMissing(source: source, after: gap.expected - 1, into: &group, progress: progress, through: gap.received - 1)
                        default: break
                        }
                        dispatch(received.event, into: &group, progress: progress)
                    }
                }
            } onGracefulShutdown: {
                Task { await subscriber.close() }
            }
        }  // waits for the handlers still running
        await progress.save()
    }

    /// Handles the source's events after `after` (up to `through`, when given) fetched through
    /// `events`; returns the last sequence seen.
    func fetchMissing(source: String, after: UInt64, into group: inout DiscardingTaskGroup, progress: ReactorProgress, through: UInt64? = nil) async -> UInt64 {
        var cursor = after
        while true {
            let page: EventsPage
            do {
                page = try await fetch(source, cursor, through.map { Int(min(500, max(1, $0 - cursor))) } ?? 500)
            } catch {
                logger.error("\(name): cannot fetch missed events; the next gap or restart retries", metadata: ["source": "\(source)", "error": "\(error)"])
                return cursor
            }
            for event in page.events where through.map({ event.sequence <= $0 }) ?? true {
                do {
                    let data = try JSONCoding.decode(Payload.self, from: JSONCoding.encode(event.data))
                    dispatch(event.withData(data), into: &group, progress: progress)
                } catch {
                    logger.error("\(name): event data does not decode; skipped", metadata: ["source": "\(source)", "sequence": "\(event.sequence)", "error": "\(error)"])
                    Task { await progress.finish(source: source, sequence: event.sequence) }
                }
                cursor = event.sequence
            }
            if page.events.isEmpty || cursor >= (through ?? page.lastSequence) { return cursor }
        }
    }

    func dispatch(_ event: CloudEvent<Payload>, into group: inout DiscardingTaskGroup, progress: ReactorProgress) {
        let handle = self.handle
        guard let key = orderingKey?(event) else {
            group.addTask {
                await handle(event)
                await progress.finish(source: event.source, sequence: event.sequence)
            }
            return
        }
        // Chained here, synchronously, so that the chain's order is the order events came in.
        let handled = chains.append(key) { await handle(event) }
        group.addTask {
            await handled.value
            await progress.finish(source: event.source, sequence: event.sequence)
        }
    }
}

/// Work chained per key: each piece starts once the previous piece of its key has finished, while
/// pieces of different keys run at once. A key's chain is dropped when its last piece ends.
final class KeyedChains: Sendable {
    private struct Chains {
        var next: UInt64 = 0
        var tails: [String: (id: UInt64, task: Task<Void, Never>)] = [:]
    }

    private let chains = Mutex(Chains())

    func append(_ key: String, _ work: @escaping @Sendable () async -> Void) -> Task<Void, Never> {
        chains.withLock { chains in
            chains.next += 1
            let (id, previous) = (chains.next, chains.tails[key]?.task)
            let task = Task {
                await previous?.value
                await work()
                self.release(key, id: id)
            }
            chains.tails[key] = (id, task)
            return task
        }
    }

    var count: Int { chains.withLock { $0.tails.count } }

    private func release(_ key: String, id: UInt64) {
        chains.withLock { chains in
            if chains.tails[key]?.id == id { chains.tails[key] = nil }
        }
    }
}

/// A reactor's watermarks, saved at most every 200 ms (and at the end).
actor ReactorProgress {
    private let cursors: any ReactorCursors
    private var marks: [String: Watermark] = [:]
    private var saved: [String: UInt64] = [:]
    private var lastSave = ContinuousClock.now

    init(cursors: any ReactorCursors) { self.cursors = cursors }

    func start(source: String, after: UInt64) {
        marks[source] = Watermark(done: after)
        saved[source] = after
    }

    func finish(source: String, sequence: UInt64) async {
        marks[source, default: Watermark(done: 0)].finish(sequence)
        if ContinuousClock.now - lastSave > .milliseconds(200) { await save() }
    }

    func save() async {
        lastSave = ContinuousClock.now
        for (source, mark) in marks where saved[source] != mark.done {
            do {
                try await cursors.saveReactorCursor(source: source, sequence: mark.done)
                saved[source] = mark.done
            } catch {
                // Kept in memory; the next save tries again. A crash before then replays events, harmlessly.
            }
        }
    }
}
