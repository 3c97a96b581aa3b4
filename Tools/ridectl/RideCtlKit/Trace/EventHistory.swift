import Bus
import Foundation
import RideContract
import Wire

/// A service's past events through its `events` op, page by page (how `ridectl trace` builds a
/// timeline when there are no spans).
enum EventHistory {
    static let pageSize = 5000
    /// Enough for a long-running dev platform; more is cut off (and said so).
    static let maximum = 2_000_000

    static func all(_ client: ServiceClient, _ op: Op<EventsQuery, EventsPage>, timeout: Duration) async throws -> (
        events: [CloudEvent<JSONValue>], complete: Bool
    ) {
        var events: [CloudEvent<JSONValue>] = []
        var after: UInt64 = 0
        while events.count < maximum {
            let page = try await client.call(op, EventsQuery(after: after, limit: pageSize), timeout: timeout)
            events += page.events
            guard let last = page.events.last?.sequence, last > after, last < page.lastSequence else { return (events, true) }
            after = last
        }
        return (events, false)
    }

    /// The order's timeline from orders' events and, for the trips they name, trips' events; nil
    /// when orders has no event of it.
    static func timeline(orderID: String, client: ServiceClient, timeout: Duration) async throws -> RideTimeline? {
        let orders = try await all(client, Ops.Orders.events, timeout: timeout)
        if !orders.complete { Output.err("ridectl trace: warning: read only the first \(maximum) events of orders\n") }
        let mine = orders.events.filter { $0.type.hasPrefix("order.") && EventTimelineBuilder.concerns($0.data, orderID: orderID) }
        guard !mine.isEmpty else { return nil }
        var trips: [CloudEvent<JSONValue>] = []
        if !EventTimelineBuilder.tripIDs(of: mine).isEmpty {
            do {
                trips = try await all(client, Ops.Trips.events, timeout: timeout).events
            } catch {
                Output.err("ridectl trace: warning: no trip events (trips did not answer: \(error))\n")
            }
        }
        return EventTimelineBuilder.timeline(orderID: orderID, orderEvents: mine, tripEvents: trips)
    }
}
