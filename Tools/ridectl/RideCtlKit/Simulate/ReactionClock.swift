import Bus
import Foundation
import RideContract
import RideModels

/// The latency of each reaction of the orders service as an outside subscriber sees it: a status
/// (or a trip's arrival) received → the status the reactor makes of it received, both timed when
/// this process decoded them (events' own times have only milliseconds). The simulator and the
/// benchmarks feed it every lifecycle event they see (through the gateway: the statuses of the
/// rides' WebSockets, which carry no arrivals).
struct ReactionClock: Sendable {
    /// When each open order reached each status.
    private var statusTimes: [String: [OrderStatus: Date]] = [:]
    /// When each trip's arrival was published.
    private var arrivals: [String: Date] = [:]
    /// Milliseconds, by reaction.
    private(set) var latencies: [String: [Double]] = [:]

    mutating func saw(_ received: ReceivedEvent<LifecycleEvent>) {
        switch received.event.data {
        case .arrival(let arrival): sawArrival(of: arrival.data.tripID, at: received.receivedAt)
        case .order(let change): saw(change.order, at: received.receivedAt)
        case .other: break
        }
    }

    /// A trip arrived at its destination (seen at `seen`).
    mutating func sawArrival(of tripID: String, at seen: Date) {
        arrivals[tripID] = seen
    }

    /// An order at its status (seen at `seen`).
    mutating func saw(_ order: Order, at seen: Date) {
        statusTimes[order.id, default: [:]][order.status] = seen
        let arrival = order.tripID.flatMap { arrivals[$0] }
        switch order.status {
        case .pickingUp: record("ACCEPTED → PICKING_UP", from: statusTimes[order.id]?[.accepted], to: seen)
        case .droppingOff: record("STARTED_RIDE → DROPPING_OFF", from: statusTimes[order.id]?[.startedRide], to: seen)
        case .reachedPickup: record("arrival → REACHED_PICKUP", from: arrival, to: seen)
        case .reachedDropoff: record("arrival → REACHED_DROPOFF", from: arrival, to: seen)
        case .completed, .cancelled:
            statusTimes[order.id] = nil
            if let trip = order.tripID { arrivals[trip] = nil }
        case .new, .accepted, .startedRide: break
        }
    }

    private mutating func record(_ reaction: String, from: Date?, to: Date) {
        guard let from else { return }
        latencies[reaction, default: []].append(to.timeIntervalSince(from) * 1000)
    }
}
