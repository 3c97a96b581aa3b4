import Bus
import Foundation
import RideContract
import RideModels
import Testing

@testable import RideCtlKit

@Suite struct ReactionClockTests {
    let start = Date(timeIntervalSince1970: 1_800_000_000)
    let rider = User(id: "r-1", role: .rider, name: "Ann", phoneNumber: "+380501234567", createdAt: Date(timeIntervalSince1970: 0))

    /// Received `ms` after the start; the event's own time stays at the start (it has only
    /// milliseconds): the clock must time the receipts.
    func received(_ event: CloudEvent<LifecycleEvent>, at ms: Double) -> ReceivedEvent<LifecycleEvent> {
        ReceivedEvent(topic: event.type, event: event, raw: [], sequence: .first, receivedAt: start.addingTimeInterval(ms / 1000))
    }

    func status(_ status: OrderStatus, trip: String? = nil, at ms: Double) -> ReceivedEvent<LifecycleEvent> {
        let order = Order(
            id: "o-1", status: status, rider: rider, pickup: Place(latitude: 0, longitude: 0), dropoff: Place(latitude: 0, longitude: 1),
            createdAt: start, updatedAt: start, tripID: trip)
        let event = CloudEvent<LifecycleEvent>(
            source: "orders", type: "order.status", time: start, sequence: 1,
            data: .order(OrderStatusChanged(order: order, previousStatus: nil)))
        return received(event, at: ms)
    }

    func arrival(_ trip: String, at ms: Double) -> ReceivedEvent<LifecycleEvent> {
        let event = CloudEvent<LifecycleEvent>(
            source: "trips", type: "trip.destination_arrival", time: start, sequence: 1,
            data: .arrival(
                TripEvent(createdAt: start, deviceID: "d", data: .init(value: "destination_arrival", tripID: trip, tripMetadata: nil))))
        return received(event, at: ms)
    }

    @Test func eachReactionIsTimedFromItsTrigger() {
        var clock = ReactionClock()
        for event in [
            status(.new, at: 0), status(.accepted, at: 10), status(.pickingUp, trip: "t1", at: 14.4), arrival("t1", at: 100),
            status(.reachedPickup, trip: "t1", at: 102), status(.startedRide, trip: "t1", at: 200),
            status(.droppingOff, trip: "t2", at: 207),
            arrival("t2", at: 300), status(.reachedDropoff, trip: "t2", at: 301), status(.completed, trip: "t2", at: 400),
        ] {
            clock.saw(event)
        }
        let rounded = clock.latencies.mapValues { $0.map { ($0 * 10).rounded() / 10 } }
        #expect(
            rounded == [
                "ACCEPTED → PICKING_UP": [4.4], "arrival → REACHED_PICKUP": [2], "STARTED_RIDE → DROPPING_OFF": [7],
                "arrival → REACHED_DROPOFF": [1],
            ])
    }
}
