import Bus
import Foundation
import RideModels
import Testing
import Wire

@testable import NotificationsService

@Suite struct NotificationRulesTests {
    static let time = Date(timeIntervalSince1970: 1_790_000_000)
    static let ann = User(id: "r1", role: .rider, name: "Ann", phoneNumber: "+1", createdAt: time)
    static let dan = User(
        id: "d1", role: .driver, name: "Dan", phoneNumber: "+2", deviceID: "dan-phone", car: Car(model: "Prius", licensePlate: "AB 1234"),
        createdAt: time)

    static func order(_ status: OrderStatus, driver: Bool = true) -> Order {
        var order = Order(
            id: "o1", status: status, rider: ann, pickup: Place(latitude: 47.1, longitude: 30.2, address: "Main St 1"),
            dropoff: Place(latitude: 47.2, longitude: 30.3), createdAt: time, updatedAt: time,
            offeredTo: status == .new ? ["d1", "d2"] : [])
        if driver { order.driver = dan }
        return order
    }

    func reactions(_ status: OrderStatus, previous: OrderStatus?, driver: Bool = true) -> (
        kinds: [String], users: [String], commands: [String]
    ) {
        let result = NotificationRules.reactions(
            to: OrderStatusChanged(order: Self.order(status, driver: driver), previousStatus: previous), at: Self.time)
        return (
            result.notifications.map(\.kind), result.notifications.map(\.userID),
            result.commands.map { "\($0.command.rawValue) \($0.deviceID)" }
        )
    }

    /// A new drop-off: the rider hears the quote, the driver (once there is one) where to go; each
    /// change is its own notification.
    @Test func aNewDropoffTellsTheRiderTheQuoteAndTheDriverWhereTo() {
        var order = Self.order(.droppingOff)
        order.dropoff.address = "Far End 5"
        order.version = 9
        let quote = FareEstimate(
            currency: "USD", totalCents: 1234, distanceMetres: 4000, durationSeconds: 600, surge: 1, pickup: order.pickup,
            dropoff: order.dropoff)
        let notes = NotificationRules.destinationChanged(
            DestinationChanged(order: order, previousDropoff: Self.order(.new).dropoff, fareQuote: quote), at: Self.time)
        #expect(notes.map(\.userID) == ["r1", "d1"] && notes.allSatisfy { $0.kind == "destination_changed" })
        #expect(notes[0].body == "Now heading to Far End 5. The fare is now about USD 12.34.")
        #expect(notes[1].body == "Your rider changed the drop-off to Far End 5.")
        order.version = 10
        #expect(
            NotificationRules.destinationChanged(
                DestinationChanged(order: order, previousDropoff: order.dropoff, fareQuote: quote), at: Self.time)[0].id != notes[0].id)
        let searching = Self.order(.new, driver: false)
        #expect(
            NotificationRules.destinationChanged(
                DestinationChanged(order: searching, previousDropoff: order.dropoff, fareQuote: quote), at: Self.time
            ).map(\.userID) == ["r1"])
    }

    @Test func anAnsweredReportTellsItsReporterOnce() {
        var report = RideReport(
            id: "rp-1", orderID: "o1", reporterID: "d1", reporterRole: .driver, category: .safety, text: "Rider was rude",
            createdAt: Self.time)
        report.status = .answered
        report.answer = String(repeating: "Thanks. ", count: 60)
        report.answeredAt = Self.time.addingTimeInterval(60)
        let note = NotificationRules.reportAnswered(report)
        #expect(
            note.userID == "d1" && note.kind == "report_answered" && note.orderID == "o1"
                && note.createdAt == Self.time.addingTimeInterval(60))
        #expect(note.body.count == 300 && note.body.hasSuffix("…"), "long answers are cut for the push")
        #expect(note.id == NotificationRules.reportAnswered(report).id, "the same event again is the same notification")
    }

    /// A failed charge asks the rider to fix their card while charges again are left, then to
    /// contact support; each failed charge is its own notification, the same event again is not.
    @Test func aFailedChargeAsksTheRiderToFixTheCard() {
        let failed = PaymentFailed(
            orderID: "o1", riderID: "r1", currency: "EUR", amountCents: 1234, reason: "declined", attempt: 0, retriesLeft: 5)
        let note = NotificationRules.paymentFailed(failed, at: Self.time)
        #expect(note.userID == "r1" && note.kind == "payment_failed" && note.orderID == "o1")
        #expect(note.body == "We could not charge EUR 12.34 for your ride. Update your card in the app, then pay again.")
        #expect(note.id == NotificationRules.paymentFailed(failed, at: Self.time.addingTimeInterval(5)).id)
        var last = failed
        (last.attempt, last.retriesLeft) = (5, 0)
        #expect(NotificationRules.paymentFailed(last, at: Self.time).id != note.id)
        #expect(NotificationRules.paymentFailed(last, at: Self.time).body.hasSuffix("Please contact support."))
    }

    @Test func eachStatusTellsTheRightPeople() {
        #expect(reactions(.new, previous: nil, driver: false).users == ["d1", "d2"])
        #expect(reactions(.new, previous: nil, driver: false).kinds == ["new_offer", "new_offer"])
        #expect(reactions(.accepted, previous: .new) == (["driver_assigned"], ["r1"], ["start_tracking dan-phone"]))
        #expect(reactions(.pickingUp, previous: .accepted).kinds.isEmpty)
        #expect(reactions(.reachedPickup, previous: .pickingUp) == (["driver_arrived"], ["r1"], []))
        #expect(reactions(.startedRide, previous: .reachedPickup) == (["ride_started"], ["r1"], []))
        #expect(reactions(.droppingOff, previous: .startedRide).kinds.isEmpty)
        #expect(reactions(.reachedDropoff, previous: .droppingOff).kinds.isEmpty)
        #expect(reactions(.completed, previous: .reachedDropoff) == (["ride_completed"], ["r1"], ["stop_tracking dan-phone"]))
    }

    @Test func deviceCommandsCarryTheTimeOfTheirStatusChange() throws {
        let accepted = NotificationRules.reactions(
            to: OrderStatusChanged(order: Self.order(.accepted), previousStatus: .new), at: Self.time)
        #expect(accepted.commands.map(\.issuedAt) == [Self.time])
        let ended = Self.time.addingTimeInterval(600)
        let completed = NotificationRules.reactions(
            to: OrderStatusChanged(order: Self.order(.completed), previousStatus: .reachedDropoff), at: ended)
        #expect(completed.commands.map(\.issuedAt) == [ended])
        #expect(
            try JSONCoding.decode(JSONValue.self, from: JSONCoding.encode(completed.commands[0].event))["issued_at"]
                == .string(RFC3339.format(ended)))
    }

    @Test func aCancellationTellsBothPartiesOnceADriverIsAssigned() {
        #expect(reactions(.cancelled, previous: .new, driver: false) == (["ride_cancelled"], ["r1"], []))
        #expect(
            reactions(.cancelled, previous: .pickingUp) == (
                ["ride_cancelled", "ride_cancelled"], ["r1", "d1"], ["stop_tracking dan-phone"]
            ))
    }

    /// A driver cancelled before the ride: the rider hears another driver is being found, and the
    /// drivers of the new round get their offers — new notifications, not the first round's again.
    @Test func aDriversCancelTellsTheRiderAndOffersAnew() {
        var order = Self.order(.new, driver: false)
        order.redispatches = 1
        let result = NotificationRules.reactions(to: OrderStatusChanged(order: order, previousStatus: .pickingUp), at: Self.time)
        #expect(result.notifications.map(\.kind) == ["finding_driver", "new_offer", "new_offer"])
        #expect(result.notifications.map(\.id) == ["o1/finding_driver/r1/1", "o1/new_offer/d1/1", "o1/new_offer/d2/1"])
        let first = NotificationRules.reactions(
            to: OrderStatusChanged(order: Self.order(.new, driver: false), previousStatus: nil), at: Self.time)
        #expect(first.notifications.map(\.id) == ["o1/new_offer/d1", "o1/new_offer/d2"], "the first round's ids as before")
    }

    /// An order no driver accepted in time: the rider is told so, in words, and may book again.
    @Test func noDriverFoundTellsTheRider() throws {
        var order = Self.order(.cancelled, driver: false)
        order.cancelReason = Order.noDriverFound
        let result = NotificationRules.reactions(to: OrderStatusChanged(order: order, previousStatus: .new), at: Self.time)
        #expect(result.notifications.map(\.kind) == ["no_driver_found"] && result.notifications.map(\.userID) == ["r1"])
        let text = try #require(result.notifications.first?.body)
        #expect(text.contains("No driver accepted your ride from Main St 1") && text.contains("book again"), "\(text)")
    }

    @Test func textsNameTheDriverCarPlaceAndFare() {
        var completed = Self.order(.completed)
        completed.fare = Fare(currency: "USD", totalCents: 1234, distanceMetres: 5400, durationSeconds: 900)
        completed.summary = TripSummary(
            locations: .init(coordinates: []), distance: 5400, duration: 900, startedAt: Self.time, completedAt: Self.time,
            deviceID: "dan-phone", markers: [])
        let done = NotificationRules.reactions(to: OrderStatusChanged(order: completed, previousStatus: .reachedDropoff), at: Self.time)
            .notifications[0]
        #expect(done.body == "5.4 km · USD 12.34. Thanks for riding with Dan.")
        #expect(done.id == "o1/ride_completed/r1", "the same event always makes the same id")
        let assigned = NotificationRules.reactions(
            to: OrderStatusChanged(order: Self.order(.accepted), previousStatus: .new), at: Self.time
        ).notifications[0]
        #expect(assigned.body == "Dan is coming in a Prius (AB 1234).")
        var withColour = Self.order(.accepted)
        withColour.driver?.car = Car(model: "Prius", licensePlate: "AB 1234", make: "Toyota", color: "white")
        let colour = NotificationRules.reactions(to: OrderStatusChanged(order: withColour, previousStatus: .new), at: Self.time)
            .notifications[0]
        #expect(colour.body == "Dan is coming in a white Toyota Prius (AB 1234).", "what the rider looks for at the pickup")
        let arrived = NotificationRules.reactions(
            to: OrderStatusChanged(order: Self.order(.reachedPickup), previousStatus: .pickingUp), at: Self.time
        ).notifications[0]
        #expect(arrived.body == "Dan is waiting at Main St 1.")
    }

    /// `order.offer_withdrawn`: the driver's app drops the offer; each withdrawal once (its id carries the order's version).
    @Test func aWithdrawnOfferTellsItsDriverWhy() {
        let accepted = NotificationRules.withdrawn(
            OfferWithdrawn(orderID: "o1", driverID: "d2", reason: .acceptedOther, version: 4), at: Self.time)
        #expect(accepted.kind == "offer_withdrawn" && accepted.userID == "d2" && accepted.orderID == "o1")
        #expect(
            accepted.id == "o1/offer_withdrawn/d2/4" && accepted.body == "You accepted another ride: this ride is no longer offered to you."
        )
        let offline = NotificationRules.withdrawn(
            OfferWithdrawn(orderID: "o1", driverID: "d2", reason: .unavailable, version: 7), at: Self.time)
        #expect(offline.id == "o1/offer_withdrawn/d2/7" && offline.body == "You went offline: this ride is no longer offered to you.")
    }

    @Test func aLateTripTellsTheRiderByHowMuchOncePerSlip() {
        let estimate = Trip.Estimate(
            arriveAt: Self.time.addingTimeInterval(600), route: .init(distance: 3000, duration: 600, remainingDuration: 600),
            estimateKind: "road", delay: 250)
        let pickup = NotificationRules.delayed(orderID: "o1", rider: "r1", tripID: "t1", leg: "pickup", estimate: estimate, at: Self.time)
        #expect(pickup.kind == "trip_delayed" && pickup.userID == "r1" && pickup.orderID == "o1" && pickup.id == "o1/trip_delayed/t1/4")
        #expect(pickup.body == "Your driver is running about 4 min late; now arriving in about 10 min.")
        var later = estimate
        later.delay = 500
        #expect(
            NotificationRules.delayed(orderID: "o1", rider: "r1", tripID: "t1", leg: "pickup", estimate: later, at: Self.time).id
                != pickup.id, "another slip")
        #expect(
            NotificationRules.delayed(orderID: "o1", rider: "r1", tripID: "t2", leg: "dropoff", estimate: estimate, at: Self.time).body
                .hasPrefix("Your ride is"))
    }

    @Test func aDriverWhoCancelsStopsTracking() {
        let cancelled = DriverCancelled(orderID: "o1", driverID: "d1", deviceID: "dan-phone", redispatch: 1, cancelledAt: Self.time)
        #expect(
            NotificationRules.driverCancelled(cancelled) == [
                AddressedDeviceCommand(deviceID: "dan-phone", command: .stopTracking, issuedAt: Self.time)
            ])
        #expect(
            NotificationRules.driverCancelled(DriverCancelled(orderID: "o1", driverID: "d1", redispatch: 1, cancelledAt: Self.time))
                .isEmpty, "no device: no command")
    }
}
