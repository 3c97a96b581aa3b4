import Bus
import RideContract
import Synchronization
import Wire

/// A publisher's log as its `events` op serves it, written by a test.
final class ScriptedLog: Sendable {
    let source: String
    private let events = Mutex<[CloudEvent<JSONValue>]>([])

    init(source: String) { self.source = source }

    /// Appends an event of `type` carrying `data`; the event as the log has it.
    @discardableResult
    func append(_ type: String, _ data: some Encodable) throws -> CloudEvent<JSONValue> {
        let data = try JSONValue(encoding: data)
        return events.withLock { events in
            let event = CloudEvent(source: source, type: type, sequence: UInt64(events.count + 1), data: data)
            events.append(event)
            return event
        }
    }

    func page(_ query: EventsQuery) -> EventsPage {
        events.withLock { events in
            EventsPage(
                events: Array(events.filter { $0.sequence > query.after }.prefix(query.limit ?? 500)), lastSequence: UInt64(events.count))
        }
    }

    /// A worker's router answering this log's `events` op.
    var router: OpRouter {
        var router = OpRouter(service: source)
        router.on(Ops.events(of: source)) { query, _ in self.page(query) }
        return router
    }
}
