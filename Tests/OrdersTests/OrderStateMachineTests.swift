import Foundation
import RideModels
import Testing

@testable import OrdersService

@Suite struct OrderStateMachineTests {
    let rider = OrderActor.rider(id: "r1")
    let otherRider = OrderActor.rider(id: "r2")
    let driver = OrderActor.driver(id: "d1")
    let otherDriver = OrderActor.driver(id: "d2")

    func facts(_ status: OrderStatus) -> OrderFacts {
        OrderFacts(status: status, riderID: "r1", driverID: status == .new ? nil : "d1", offeredTo: status == .new ? ["d1", "d2"] : [])
    }

    /// The one actor entitled to each action on an order of facts(…).
    func entitled(_ action: OrderAction) -> OrderActor {
        switch action {
        case .accept, .decline, .startRide, .endRide, .noShow: return driver
        case .cancel: return rider
        case .pickupTripCreated, .arrivedAtPickup, .dropoffTripCreated, .arrivedAtDropoff: return .reactor
        }
    }

    @Test func theNineStepsInOrder() throws {
        var status = OrderStatus.new
        let steps: [(OrderAction, OrderActor, OrderStatus)] = [
            (.accept, driver, .accepted), (.pickupTripCreated, .reactor, .pickingUp), (.arrivedAtPickup, .reactor, .reachedPickup),
            (.startRide, driver, .startedRide), (.dropoffTripCreated, .reactor, .droppingOff),
            (.arrivedAtDropoff, .reactor, .reachedDropoff),
            (.endRide, driver, .completed),
        ]
        for (action, actor, expected) in steps {
            var current = facts(status)
            if status == .new { current.offeredTo = ["d1"] }
            status = try OrderStateMachine.apply(action, to: current, by: actor).get()
            #expect(status == expected, "\(action)")
        }
    }

    @Test func everyActionFromEveryStatusIsLegalExactlyWhereTheTableSays() {
        let legal: [OrderAction: Set<OrderStatus>] = [
            .accept: [.new], .decline: [.new], .pickupTripCreated: [.accepted], .arrivedAtPickup: [.pickingUp],
            .startRide: [.reachedPickup], .dropoffTripCreated: [.startedRide], .arrivedAtDropoff: [.droppingOff],
            .endRide: [.reachedDropoff], .noShow: [.reachedPickup],
            .cancel: [.new, .accepted, .pickingUp, .reachedPickup, .startedRide, .droppingOff, .reachedDropoff],
        ]
        for action in OrderAction.allCases {
            for status in OrderStatus.allCases {
                let result = OrderStateMachine.apply(action, to: facts(status), by: entitled(action))
                if legal[action]!.contains(status) {
                    #expect((try? result.get()) != nil, "\(action) from \(status) should be legal")
                } else {
                    #expect(result == .failure(.illegal(action: action, current: status)), "\(action) from \(status) should be a 409")
                }
            }
        }
    }

    @Test func whoMayDoWhat() {
        // People cannot perform the reactor's steps; of its arrivals, the order's driver may report
        // one where the geofence has not fired (orders.arrive), nobody else.
        for action in [OrderAction.pickupTripCreated, .arrivedAtPickup, .dropoffTripCreated, .arrivedAtDropoff] {
            for actor in [rider, otherDriver] {
                #expect(isForbidden(OrderStateMachine.apply(action, to: facts(.accepted), by: actor)))
            }
        }
        #expect(isForbidden(OrderStateMachine.apply(.pickupTripCreated, to: facts(.accepted), by: driver)))
        #expect(OrderStateMachine.apply(.arrivedAtPickup, to: facts(.pickingUp), by: driver) == .success(.reachedPickup))
        #expect(OrderStateMachine.apply(.arrivedAtDropoff, to: facts(.droppingOff), by: driver) == .success(.reachedDropoff))
        // A no-show: the order's driver, at the pickup; not the rider, not another driver, not the reactor.
        #expect(OrderStateMachine.apply(.noShow, to: facts(.reachedPickup), by: driver) == .success(.cancelled))
        for actor in [rider, otherDriver, OrderActor.reactor] {
            #expect(isForbidden(OrderStateMachine.apply(.noShow, to: facts(.reachedPickup), by: actor)))
        }
        // Riders cannot drive; drivers only their own or offered orders.
        for action in [OrderAction.accept, .decline, .startRide, .endRide] {
            #expect(isForbidden(OrderStateMachine.apply(action, to: facts(.new), by: rider)))
        }
        var notOffered = facts(.new)
        notOffered.offeredTo = ["d2"]
        #expect(isForbidden(OrderStateMachine.apply(.accept, to: notOffered, by: driver)))
        // A driver who declined may not take the order back once it went to another driver.
        let declined = OrderFacts(status: .new, riderID: "r1", offeredTo: ["d2"], formerlyOffered: ["d1", "d2"], declined: ["d1"])
        #expect(isForbidden(OrderStateMachine.apply(.accept, to: declined, by: driver)))
        #expect(OrderStateMachine.apply(.accept, to: declined, by: otherDriver) == .success(.accepted))
        #expect(isForbidden(OrderStateMachine.apply(.startRide, to: facts(.reachedPickup), by: otherDriver)))
        #expect(isForbidden(OrderStateMachine.apply(.endRide, to: facts(.reachedDropoff), by: otherDriver)))
        // Cancel: the order's rider, its driver, or the reactor.
        #expect(isForbidden(OrderStateMachine.apply(.cancel, to: facts(.accepted), by: otherRider)))
        #expect(isForbidden(OrderStateMachine.apply(.cancel, to: facts(.accepted), by: otherDriver)))
        #expect(
            isForbidden(OrderStateMachine.apply(.cancel, to: facts(.new), by: driver)), "an offered driver declines, it does not cancel")
        #expect(OrderStateMachine.apply(.cancel, to: facts(.pickingUp), by: driver) == .success(.cancelled))
        #expect(OrderStateMachine.apply(.cancel, to: facts(.droppingOff), by: .reactor) == .success(.cancelled))
    }

    @Test func aSecondAcceptIsAConflictNamingTheStatus() {
        // Offers end when a driver accepts; the drivers who had one are told why they are too late.
        let accepted = OrderFacts(status: .accepted, riderID: "r1", driverID: "d1", offeredTo: [], formerlyOffered: ["d1", "d2"])
        #expect(OrderStateMachine.apply(.accept, to: accepted, by: otherDriver) == .failure(.illegal(action: .accept, current: .accepted)))
        #expect(isForbidden(OrderStateMachine.apply(.accept, to: accepted, by: .driver(id: "d3"))), "never offered")
        #expect(!OrderStateMachine.canView(accepted, by: otherDriver), "a past offer does not show the order")
        #expect(OrderRefusal.illegal(action: .accept, current: .accepted).message == "cannot accept an order that is ACCEPTED")
    }

    /// A retried accept, start or end by the order's own driver, once the first attempt was applied,
    /// is a repeat (answered with the order as it is); from anyone else, or before, it is not.
    @Test func aDriverRepeatingTheirOwnStepIsARepeatNotAConflict() {
        let repeatedFrom: [OrderAction: Set<OrderStatus>] = [
            .accept: [.accepted, .pickingUp, .reachedPickup, .startedRide, .droppingOff, .reachedDropoff, .completed],
            .startRide: [.startedRide, .droppingOff, .reachedDropoff, .completed],
            .endRide: [.completed], .arrivedAtPickup: [.reachedPickup], .arrivedAtDropoff: [.reachedDropoff],
        ]
        for action in OrderAction.allCases {
            for status in OrderStatus.allCases {
                let expected = repeatedFrom[action]?.contains(status) ?? false
                #expect(OrderStateMachine.isRepeat(action, of: facts(status), by: driver) == expected, "\(action) from \(status)")
                #expect(!OrderStateMachine.isRepeat(action, of: facts(status), by: otherDriver), "not their order")
                #expect(!OrderStateMachine.isRepeat(action, of: facts(status), by: rider))
            }
        }
        // A cancelled order has no driver: accepting it again is the 409 it always was.
        let cancelled = OrderFacts(status: .cancelled, riderID: "r1", driverID: nil, formerlyOffered: ["d1"])
        #expect(!OrderStateMachine.isRepeat(.accept, of: cancelled, by: driver))
    }

    /// A booking repeats the rider's open order only while it waits for a driver, within a minute,
    /// to the same places; anything else is another ride (and the rider's open order makes it a 409).
    @Test func aRepeatedBookingIsTheSameWaitingRideWithinAMinute() {
        let start = Date(timeIntervalSince1970: 1_790_000_000)
        let ann = User(id: "r1", role: .rider, name: "Ann", phoneNumber: "+15550100", createdAt: start)
        func booking(at seconds: Double, dropoff: Double = 30.3, rider: User = ann) -> Order {
            Order(
                id: "o\(seconds)", status: .new, rider: rider, pickup: Place(latitude: 47.1, longitude: 30.2, address: "Here"),
                dropoff: Place(latitude: 47.2, longitude: dropoff), createdAt: start.addingTimeInterval(seconds), updatedAt: start)
        }
        let open = booking(at: 0)
        #expect(OrdersOps.isRepeatedBooking(open, of: booking(at: 2.5)))
        #expect(!OrdersOps.isRepeatedBooking(open, of: booking(at: 60)), "a minute later: another ride")
        #expect(!OrdersOps.isRepeatedBooking(open, of: booking(at: 1, dropoff: 30.4)), "elsewhere")
        var accepted = open
        accepted.status = .accepted
        #expect(!OrdersOps.isRepeatedBooking(accepted, of: booking(at: 1)), "a ride under way is not booked again")
        #expect(
            !OrdersOps.isRepeatedBooking(
                open, of: booking(at: 1, rider: User(id: "r2", role: .rider, name: "Bob", phoneNumber: "+15550101", createdAt: start))))
    }

    @Test func anOutsiderLearnsNothingAboutTheStatus() {
        // Forbidden comes before illegal: a stranger gets 403 whatever the status.
        for status in OrderStatus.allCases {
            #expect(isForbidden(OrderStateMachine.apply(.cancel, to: facts(status), by: otherRider)))
        }
    }

    @Test func viewing() {
        #expect(OrderStateMachine.canView(facts(.new), by: rider))
        #expect(!OrderStateMachine.canView(facts(.new), by: otherRider))
        #expect(OrderStateMachine.canView(facts(.new), by: otherDriver), "offered")
        #expect(!OrderStateMachine.canView(facts(.accepted), by: otherDriver))
        #expect(OrderStateMachine.canView(facts(.completed), by: driver))
    }

    @Test func statusesAreOrderedAndOpenOrFinal() {
        #expect(OrderStatus.allCases.sorted() == OrderStatus.allCases)
        #expect(OrderStatus.allCases.filter { !$0.isOpen } == [.completed, .cancelled])
        #expect(OrderStatus(rawValue: "PICKING_UP") == .pickingUp)
    }

    func isForbidden(_ result: Result<OrderStatus, OrderRefusal>) -> Bool {
        if case .failure(.forbidden) = result { return true }
        return false
    }
}

@Suite struct FareScheduleTests {
    let schedule = FareSchedule(currency: "USD", baseCents: 250, perKilometreCents: 120, perMinuteCents: 30, minimumCents: 500)

    @Test func basePlusDistancePlusTime() {
        // 250 + 12.5 km × 120 + 20 min × 30 = 250 + 1500 + 600
        #expect(schedule.fareCents(metres: 12_500, seconds: 1200) == 2350)
        // 250 + 3.333 km × 120 + 1.5 min × 30 = 694.96, to the nearest cent
        #expect(schedule.fareCents(metres: 3333, seconds: 90) == 695)
    }

    @Test func neverBelowTheMinimumNorFromBadInput() {
        #expect(schedule.fareCents(metres: 0, seconds: 0) == 500)
        #expect(schedule.fareCents(metres: -5000, seconds: .nan) == 500)
        #expect(schedule.fareCents(metres: .infinity, seconds: 60) == 500)
    }

    @Test func problemsNameTheField() {
        #expect(schedule.problem == nil)
        #expect(FareSchedule(currency: "usd").problem?.hasPrefix("currency:") == true)
        #expect(FareSchedule(perMinuteCents: -1).problem == "per_minute: must not be negative, got -1")
    }
}
