import Bus
import Foundation
import Logging
import ServiceLifecycle
import Storage
import Tracing
import Wire

/// A consumer of other services' events that misses none — the Cloud Function trigger without
/// its gaps — and that a forged event cannot steer. It keeps, per source, the sequence up to which
/// every event has been handled (a `Watermark`, stored). On start it first catches up through the
/// sources' `events` op (their logs). Handlers run concurrently (one task per event) and must be
/// idempotent: an event seen twice (after a restart, or repeated by the bus) is handled twice.
/// Events with the same `orderingKey` (say, of one order) are handled one after another, in the
/// order they came.
///
/// What it trusts: the publisher's log, not the bus. It keeps its own position per source
/// (`ReactorPositions`), moved only by events it took. The next event in order is taken from the
/// bus (as the log has it, for kinds it `verifies`); anything else is settled by the log: a jump is
/// filled from it, and refused when it goes beyond the log's newest sequence; an event at a
/// sequence already taken but not a copy (a conflict) is replaced by the log's own; a claim that
/// the source started over is believed only when its log did. Refusals are counted
/// (`RefusedEvents`) and logged once per source and minute, never adopted: the subscriber's
/// tracker is set back (`EventFeed.expect`). The payloads of events taken from the bus unverified
/// may still be forged: the handlers of such kinds read what they act on from its owner.
public struct EventReactor<Payload: Decodable & Sendable>: Service {
    public typealias Fetch = @Sendable (_ source: String, _ after: UInt64, _ limit: Int) async throws -> EventsPage
    public typealias Handle = @Sendable (CloudEvent<Payload>) async -> Void

    let name: String
    let sources: [String]
    let cursors: any ReactorCursors
    let subscriber: any EventFeed<Payload>
    let fetch: Fetch
    let handle: Handle
    let orderingKey: (@Sendable (CloudEvent<Payload>) -> String?)?
    let verifies: (@Sendable (CloudEvent<Payload>) -> Bool)?
    let refusals: RefusedEvents
    let logger: Logger
    private let chains = KeyedChains()

    /// - Parameters:
    ///   - sources: the sources whose every event is handled; subscribe to all their topics, or a
    ///     topic not subscribed to looks like a gap.
    ///   - fetch: a source's `events` op (paged).
    ///   - orderingKey: events with the same key are handled in order (nil: no order kept).
    ///   - verifies: events for which it is true are handled as their publisher's log has them (read
    ///     by sequence, at most one read per source and batch), never as the bus carried them: for
    ///     kinds whose handler acts on the payload itself (a rating, a notification).
    ///   - service: the reacting service, for the handlers' spans (`react <service> <event type>`,
    ///     continuing the event's trace); `name` when not given.
    public init(
        name: String, service: String? = nil, sources: [String], cursors: any ReactorCursors, subscriber: any EventFeed<Payload>,
        logger: Logger,
        orderingKey: (@Sendable (CloudEvent<Payload>) -> String?)? = nil, verifies: (@Sendable (CloudEvent<Payload>) -> Bool)? = nil,
        refusals: RefusedEvents = .shared, fetch: @escaping Fetch, handle: @escaping Handle
    ) {
        self.orderingKey = orderingKey
        self.verifies = verifies
        self.refusals = refusals
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
        var positions = ReactorPositions()
        await withDiscardingTaskGroup { group in
            // Catch up before following the bus: the subscription is already open, so nothing
            // published meanwhile is lost; what is seen twice is handled twice, harmlessly.
            for source in sources {
                let after = (try? await cursors.reactorCursor(source: source)) ?? 0
                await progress.start(source: source, after: after)
                let read = await readLog(source, after: after, epoch: 0, into: &group, progress: progress)
                var lastRead = read.last
                if lastRead == nil { lastRead = await logMark(source, at: read.reached) }
                positions.start(source, at: read.reached, lastRead: lastRead)
                subscriber.expect(source: source, after: read.reached)
            }
            await withGracefulShutdownHandler {
                for await batch in subscriber.deliveries {
                    await react(to: batch, positions: &positions, into: &group, progress: progress)
                }
            } onGracefulShutdown: {
                Task { await subscriber.close() }
            }
        }  // waits for the handlers still running
        await progress.save()
    }

    /// One event taken from the bus, to be handled in order with the others of its batch.
    struct Taken {
        var event: CloudEvent<Payload>
        /// Handled as the log has it.
        var verified: Bool
    }

    func react(
        to batch: [Delivery<Payload>], positions: inout ReactorPositions, into group: inout DiscardingTaskGroup, progress: ReactorProgress
    ) async {
        var taken: [Taken] = []
        for case .event(let received) in batch {
            let event = received.event
            guard sources.contains(event.source) else { continue }
            let step = positions.step(event.source, sequence: event.sequence, observation: received.sequence)
            switch step {
            case .skip: continue
            case .take:
                positions.took(event.source, event.sequence)
                taken.append(Taken(event: event, verified: verifies?(event) ?? false))
                continue
            default: break
            }
            // What was taken before is handled before the log is asked about this one.
            await settle(&taken, positions: &positions, into: &group, progress: progress)
            switch step {
            case .fill(let after): await fill(event, after: after, positions: &positions, into: &group, progress: progress)
            case .checkConflict: await checkConflict(event, positions: &positions, into: &group, progress: progress)
            case .checkRestart: await checkRestart(event, positions: &positions, into: &group, progress: progress)
            case .skip, .take: break
            }
        }
        await settle(&taken, positions: &positions, into: &group, progress: progress)
    }

    /// Handles what was taken, in order: as the bus carried it, or, for kinds it verifies, as the
    /// log has it (one read per source). One the log has not is refused, and the source set back.
    func settle(_ taken: inout [Taken], positions: inout ReactorPositions, into group: inout DiscardingTaskGroup, progress: ReactorProgress)
        async
    {
        guard !taken.isEmpty else { return }
        defer { taken.removeAll(keepingCapacity: true) }
        var logs: [String: LogSlice] = [:]
        for (source, events) in Dictionary(grouping: taken.filter(\.verified).map(\.event), by: \.source) {
            let sequences = events.map(\.sequence)
            logs[source] = await readSlice(source, from: sequences.min() ?? 1, through: sequences.max() ?? 1)
        }
        var stopped: Set<String> = []
        for item in taken {
            let (event, source) = (item.event, item.event.source)
            guard !stopped.contains(source) else { continue }
            let epoch = positions[source]?.epoch ?? 0
            guard item.verified, let log = logs[source] else {
                dispatch(event, epoch: epoch, into: &group, progress: progress)
                continue
            }
            if let logged = log.events[event.sequence] {
                if logged.id != event.id { noteConflict(event) }
                dispatchLogged(logged, epoch: epoch, into: &group, progress: progress)
                positions.read(
                    source, after: event.sequence - 1, through: event.sequence, last: .init(sequence: logged.sequence, id: logged.id))
                continue
            }
            // Not read, or not in the log: nothing of the source from here on is taken.
            stopped.insert(source)
            if let newest = log.newest {
                refusals.note(
                    .farAhead, source: source, "sequence \(event.sequence) is beyond the newest in its log (\(newest))", logger: logger)
                await setBack(source, to: min(newest, event.sequence - 1), positions: &positions, progress: progress, subscriber: true)
            } else {
                await setBack(source, to: event.sequence - 1, positions: &positions, progress: progress, subscriber: false)
            }
        }
    }

    func dispatch(_ event: CloudEvent<Payload>, epoch: Int, into group: inout DiscardingTaskGroup, progress: ReactorProgress) {
        let handle = self.handle
        guard let key = orderingKey?(event) else {
            group.addTask {
                await handle(event)
                await progress.finish(source: event.source, sequence: event.sequence, epoch: epoch)
            }
            return
        }
        // Chained here, synchronously, so that the chain's order is the order events came in.
        let handled = chains.append(key) { await handle(event) }
        group.addTask {
            await handled.value
            await progress.finish(source: event.source, sequence: event.sequence, epoch: epoch)
        }
    }

    /// Handles an event as its publisher's log has it.
    func dispatchLogged(_ event: CloudEvent<JSONValue>, epoch: Int, into group: inout DiscardingTaskGroup, progress: ReactorProgress) {
        do {
            let typed = try (event as? CloudEvent<Payload>) ?? event.retyped(as: Payload.self)
            dispatch(typed, epoch: epoch, into: &group, progress: progress)
        } catch {
            logger.error(
                "\(name): event data does not decode; skipped",
                metadata: ["source": "\(event.source)", "sequence": "\(event.sequence)", "error": "\(error)"])
            Task { await progress.finish(source: event.source, sequence: event.sequence, epoch: epoch) }
        }
    }

    /// `known` back to `sequence` (and the watermark; the subscriber's tracker when `subscriber`).
    func setBack(_ source: String, to sequence: UInt64, positions: inout ReactorPositions, progress: ReactorProgress, subscriber tell: Bool)
        async
    {
        if let epoch = positions.setBack(source, to: sequence) { await progress.setBack(source: source, to: sequence, epoch: epoch) }
        if tell { subscriber.expect(source: source, after: sequence) }
    }

    func noteConflict(_ event: CloudEvent<Payload>) {
        refusals.note(
            .conflict, source: event.source,
            "event \(event.id.prefix(100)) is not the one its log has at sequence \(event.sequence); the log's was handled",
            logger: logger)
    }
}
