import Bus
import Logging
import Storage
import Wire

/// How `EventReactor` settles what the bus alone cannot tell: it asks the publisher's log.
extension EventReactor {
    /// What a read of a source's log handled.
    struct LogRead {
        /// The last sequence handled (where the read started, when none).
        var reached: UInt64
        /// The log's newest sequence (nil: the read failed before any answer).
        var newest: UInt64?
        var last: ReactorPositions.LogMark?
        var failed = false
    }

    /// The events of a log from one sequence through another, to check events against.
    struct LogSlice {
        var events: [UInt64: CloudEvent<JSONValue>] = [:]
        /// The log's newest sequence; nil when it could not be read.
        var newest: UInt64?
    }

    /// Handles the source's events after `after` (up to `through`, when given) as its log has them.
    func readLog(
        _ source: String, after: UInt64, through: UInt64? = nil, epoch: Int, into group: inout DiscardingTaskGroup,
        progress: ReactorProgress
    ) async -> LogRead {
        var read = LogRead(reached: after)
        while true {
            let page: EventsPage
            do {
                page = try await fetch(source, read.reached, through.map { Int(min(500, max(1, $0 - read.reached))) } ?? 500)
            } catch {
                logger.error(
                    "\(name): cannot read a source's log; the next event of it tries again",
                    metadata: ["source": "\(source)", "error": "\(error)"])
                read.failed = true
                return read
            }
            read.newest = page.lastSequence
            let before = read.reached
            for event in page.events where event.sequence > read.reached && through.map({ event.sequence <= $0 }) ?? true {
                dispatchLogged(event, epoch: epoch, into: &group, progress: progress)
                read.reached = event.sequence
                read.last = .init(sequence: event.sequence, id: event.id)
            }
            if read.reached == before || read.reached >= min(through ?? .max, page.lastSequence) { return read }
        }
    }

    /// The log's events `from ... through` (nothing handled).
    func readSlice(_ source: String, from: UInt64, through: UInt64) async -> LogSlice {
        var slice = LogSlice()
        var cursor = from - 1
        do {
            while cursor < through {
                let page = try await fetch(source, cursor, Int(min(500, through - cursor)))
                slice.newest = page.lastSequence
                let before = cursor
                for event in page.events where event.sequence > cursor && event.sequence <= through {
                    slice.events[event.sequence] = event
                    cursor = event.sequence
                }
                if cursor == before { break }
            }
        } catch {
            logger.error(
                "\(name): cannot read a source's log to check events; the next event of it tries again",
                metadata: ["source": "\(source)", "error": "\(error)"])
            slice.newest = nil
        }
        return slice
    }

    /// The log's event at `sequence`, to tell later whether the log started over (nil when it cannot be read).
    func logMark(_ source: String, at sequence: UInt64) async -> ReactorPositions.LogMark? {
        guard sequence > 0, let event = try? await fetch(source, sequence - 1, 1).events.first, event.sequence == sequence else {
            return nil
        }
        return .init(sequence: event.sequence, id: event.id)
    }

    /// A jump from `after` to `event`: the events between, and the event itself, handled as the log has them.
    /// Beyond the log's newest it is refused and the subscriber set back: never adopted.
    func fill(
        _ event: CloudEvent<Payload>, after: UInt64, positions: inout ReactorPositions, into group: inout DiscardingTaskGroup,
        progress: ReactorProgress
    )
        async
    {
        let source = event.source
        let read = await readLog(
            source, after: after, through: event.sequence, epoch: positions[source]?.epoch ?? 0, into: &group, progress: progress)
        positions.read(source, after: after, through: read.reached, last: read.last)
        if read.failed { return }  // known stays where the read got to: the next event reads on
        guard read.reached == event.sequence else {
            refusals.note(
                .farAhead, source: source, "sequence \(event.sequence) is beyond the newest in its log (\(read.newest ?? 0))",
                logger: logger)
            subscriber.expect(source: source, after: read.reached)
            return
        }
        logger.warning(
            "\(name): sequence gap; read the missed events from the source's log",
            metadata: ["source": "\(source)", "after": "\(after)", "received": "\(event.sequence)"])
        if read.last?.id != event.id { noteConflict(event) }
    }

    /// An event at or below the position, not a copy of what was taken there: the log's event at
    /// that sequence is handled (again: idempotent). If the log's newest is below the position,
    /// what was taken beyond it was not the publisher's: the position goes back there.
    func checkConflict(
        _ event: CloudEvent<Payload>, positions: inout ReactorPositions, into group: inout DiscardingTaskGroup, progress: ReactorProgress
    ) async {
        let source = event.source
        guard event.sequence > 0 else { return }
        let page: EventsPage
        do {
            page = try await fetch(source, event.sequence - 1, 1)
        } catch {
            // In doubt: read again from before it with the source's next event.
            logger.error("\(name): cannot read a source's log to check an event", metadata: ["source": "\(source)", "error": "\(error)"])
            await setBack(source, to: event.sequence - 1, positions: &positions, progress: progress, subscriber: false)
            return
        }
        if let logged = page.events.first, logged.sequence == event.sequence {
            if logged.id != event.id { noteConflict(event) }
            dispatchLogged(logged, epoch: positions[source]?.epoch ?? 0, into: &group, progress: progress)
            positions.read(
                source, after: event.sequence - 1, through: event.sequence, last: .init(sequence: logged.sequence, id: logged.id))
        } else {
            refusals.note(
                .farAhead, source: source, "sequence \(event.sequence) is beyond the newest in its log (\(page.lastSequence))",
                logger: logger)
        }
        if let known = positions[source]?.known, known > page.lastSequence {
            logger.warning(
                "\(name): events beyond the newest in a source's log were taken; set back",
                metadata: ["source": "\(source)", "newest": "\(page.lastSequence)"])
            await setBack(source, to: page.lastSequence, positions: &positions, progress: progress, subscriber: true)
        }
    }

    /// Sequence 1 with a new id: believed only when the log no longer has the last event read from
    /// it (or, with none read, when the log's first event is this one and its newest is below the
    /// position); then the source is read again from its start. Otherwise refused.
    func checkRestart(
        _ event: CloudEvent<Payload>, positions: inout ReactorPositions, into group: inout DiscardingTaskGroup, progress: ReactorProgress
    ) async {
        let source = event.source
        guard let position = positions[source] else { return }
        let startsOver: Bool
        do {
            if let mark = position.lastRead {
                let logged = try await fetch(source, mark.sequence - 1, 1).events.first
                startsOver = logged?.sequence != mark.sequence || logged?.id != mark.id
            } else {
                let page = try await fetch(source, 0, 1)
                startsOver = page.events.first?.id == event.id && page.lastSequence < position.known
            }
        } catch {
            logger.error(
                "\(name): cannot read a source's log to check a restart; not believed",
                metadata: ["source": "\(source)", "error": "\(error)"])
            startsOver = false
        }
        guard startsOver else {
            refusals.note(
                .restart, source: source, "sequence 1 (event \(event.id.prefix(100))) while its log goes on past \(position.known)",
                logger: logger)
            subscriber.expect(source: source, after: position.known)
            return
        }
        logger.warning("\(name): a source's log started over; reading it from the start", metadata: ["source": "\(source)"])
        let epoch = positions.restart(source)
        await progress.setBack(source: source, to: 0, epoch: epoch)
        let read = await readLog(source, after: 0, epoch: epoch, into: &group, progress: progress)
        positions.read(source, after: 0, through: read.reached, last: read.last)
        subscriber.expect(source: source, after: read.reached)
    }
}
