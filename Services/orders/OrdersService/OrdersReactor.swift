import Bus
import Foundation
import Logging
import RideModels
import ServiceLifecycle
import Storage

/// The orders reactor: subscribes to `order.status.` and `trip.` (acting on arrivals) the way
/// Cloud Functions are triggered by Firestore changes, and runs `OrderReactions` for each event.
///
/// Nothing depends on one event arriving: the reactor keeps, per source, the sequence up to which
/// every event has been handled (a `Watermark`, stored). On start it first catches up through the
/// sources' `events` (its own outbox; `trips.events`), and when a sequence gap shows on the bus
/// it fetches the missing events the same way before going on. Reactions run concurrently (one
/// task per event) and are idempotent, so an event handled twice changes nothing.
struct OrdersReactor: Service {
    static let sources = [BusContract.Service.orders, BusContract.Service.trips]

    let reactions: OrderReactions
    let store: OrderStore
    let platform: ServiceClient
    let subscriber: EventSubscriber<LifecycleEvent>
    let logger: Logger

    func run() async throws {
        let progress = ReactorProgress(store: store)
        await withDiscardingTaskGroup { group in
            // Catch up before following the bus: the subscription is already open, so nothing
            // published meanwhile is lost; what is seen twice is handled twice, harmlessly.
            for source in Self.sources {
                let after = (try? await store.reactorCursor(source: source)) ?? 0
                await progress.start(source: source, after: after)
                subscriber.expect(source: source, after: await fetchMissing(source: source, after: after, into: &group, progress: progress))
            }
            await withGracefulShutdownHandler {
                for await batch in subscriber.deliveries {
                    for case .event(let received) in batch {
                        let source = received.event.source
                        guard Self.sources.contains(source) else { continue }
                        switch received.sequence {
                        case .duplicate: continue
                        case .gap(let gap):
                            logger.warning("reactor: sequence gap; fetching the missed events", metadata: ["gap": "\(gap)"])
                            _ = await fetchMissing(source: source, after: gap.expected - 1, into: &group, progress: progress, through: gap.received - 1)
                        default: break
                        }
                        dispatch(received.event, into: &group, progress: progress)
                    }
                }
            } onGracefulShutdown: {
                Task { await subscriber.close() }
            }
        }  // waits for the reactions still running
        await progress.save()
    }

    /// Handles the source's events after `after` (up to `through`, when given) fetched through
    /// `events`; returns the last sequence seen.
    func fetchMissing(source: String, after: UInt64, into group: inout DiscardingTaskGroup, progress: ReactorProgress, through: UInt64? = nil) async -> UInt64 {
        var cursor = after
        while true {
            let page: EventsPage
            do {
                page = try await events(source: source, after: cursor, limit: through.map { Int(min(500, max(1, $0 - cursor))) } ?? 500)
            } catch {
                logger.error("reactor: cannot fetch missed events; the next gap or restart retries", metadata: ["source": "\(source)", "error": "\(error)"])
                return cursor
            }
            for event in page.events where through.map({ event.sequence <= $0 }) ?? true {
                do {
                    let data = try JSONCoding.decode(LifecycleEvent.self, from: JSONCoding.encode(event.data))
                    dispatch(event.withData(data), into: &group, progress: progress)
                } catch {
                    logger.error("reactor: event data does not decode; skipped", metadata: ["source": "\(source)", "sequence": "\(event.sequence)", "error": "\(error)"])
                    Task { await progress.finish(source: source, sequence: event.sequence) }
                }
                cursor = event.sequence
            }
            if page.events.isEmpty || cursor >= (through ?? page.lastSequence) { return cursor }
        }
    }

    func events(source: String, after: UInt64, limit: Int) async throws -> EventsPage {
        if source == BusContract.Service.orders {
            return try await store.database.read { db in try Outbox.page(db, source: source, query: EventsQuery(after: after, limit: limit)) }
        }
        return try await platform.call(source, "events", EventsQuery(after: after, limit: limit), as: EventsPage.self)
    }

    func dispatch(_ event: CloudEvent<LifecycleEvent>, into group: inout DiscardingTaskGroup, progress: ReactorProgress) {
        let reactions = self.reactions
        group.addTask {
            switch event.data {
            case .order(let change): await reactions.react(to: change.order)
            case .arrival(let arrival): await reactions.react(to: arrival)
            case .otherTripEvent: break
            }
            await progress.finish(source: event.source, sequence: event.sequence)
        }
    }
}

/// The reactor's watermarks, saved at most every 200 ms (and at the end).
actor ReactorProgress {
    private let store: OrderStore
    private var marks: [String: Watermark] = [:]
    private var saved: [String: UInt64] = [:]
    private var lastSave = ContinuousClock.now

    init(store: OrderStore) { self.store = store }

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
                try await store.saveReactorCursor(source: source, sequence: mark.done)
                saved[source] = mark.done
            } catch {
                // Kept in memory; the next save tries again. A crash before then replays events, harmlessly.
            }
        }
    }
}
