import Bus
import Foundation
import RideModels

/// A silent command (`DeviceCommand`) addressed to one driver's phone, published on `device.command.<device_id>`.
public struct AddressedDeviceCommand: Sendable, Equatable {
    public var deviceID: String
    public var command: DeviceCommand
    /// The time of the status change behind it (see `DeviceCommandEvent.issuedAt`).
    public var issuedAt: Date?

    public init(deviceID: String, command: DeviceCommand, issuedAt: Date? = nil) {
        self.deviceID = deviceID
        self.command = command
        self.issuedAt = issuedAt
    }

    /// What goes out on its topic, which names the device.
    public var event: DeviceCommandEvent { DeviceCommandEvent(command: command, issuedAt: issuedAt) }
}

/// Who hears about what (pure: an event in, notifications and device commands out).
///
/// Rider: driver assigned, arriving (the first estimate of the pickup trip), arrived, ride
/// started, completed with distance and fare, cancelled by the driver. Driver: a new offer nearby,
/// the order cancelled by the rider. Drivers' phones: start tracking when a ride is accepted,
/// stop when it ends.
public enum NotificationRules {
    public static func reactions(to change: OrderStatusChanged, at time: Date) -> (
        notifications: [UserNotification], commands: [AddressedDeviceCommand]
    ) {
        let order = change.order
        let driverName = order.driver?.name ?? "Your driver"
        // One notification per order, kind and user — per round of the ride: after a driver's cancel
        // the order is offered and accepted anew, and those are news again.
        let round = order.redispatches.map { "/\($0)" } ?? ""
        func note(_ user: String, _ kind: String, _ title: String, _ body: String) -> UserNotification {
            UserNotification(
                id: "\(order.id)/\(kind)/\(user)\(round)", userID: user, kind: kind, title: title, body: body, orderID: order.id,
                createdAt: time)
        }
        let rider = order.rider.id
        var notifications: [UserNotification] = []
        var commands: [AddressedDeviceCommand] = []
        switch order.status {
        case .new:
            if let previous = change.previousStatus, previous != .new {
                notifications.append(
                    note(rider, "finding_driver", "Finding you another driver", "Your driver cancelled. We are finding you another one."))
            }
            for driver in order.offeredTo {
                notifications.append(
                    note(driver, "new_offer", "New ride nearby", "Pickup at \(place(order.pickup)). Accept it before another driver does."))
            }
        case .accepted:
            let car = order.driver?.car.map { " in a \($0.description)" } ?? ""
            notifications.append(note(rider, "driver_assigned", "Driver assigned", "\(driverName) is coming\(car)."))
            if let device = order.driver?.deviceID {
                commands.append(AddressedDeviceCommand(deviceID: device, command: .startTracking, issuedAt: time))
            }
        case .reachedPickup:
            notifications.append(
                note(rider, "driver_arrived", "Your driver is here", "\(driverName) is waiting at \(place(order.pickup))."))
        case .startedRide:
            notifications.append(note(rider, "ride_started", "Ride started", "Heading to \(place(order.dropoff))."))
        case .completed:
            let distance = order.summary.map { String(format: "%.1f km", Double($0.distance) / 1000) } ?? "your ride"
            let fare = order.fare.map { " · \(money($0.totalCents, $0.currency))" } ?? ""
            notifications.append(
                note(rider, "ride_completed", "Ride completed", "\(distance)\(fare). Thanks for riding with \(driverName)."))
            if let device = order.driver?.deviceID {
                commands.append(AddressedDeviceCommand(deviceID: device, command: .stopTracking, issuedAt: time))
            }
        case .cancelled:
            let reason = order.cancelReason.map { ": \($0)" } ?? ""
            // The one who cancelled knows; the other party is told. With no driver yet, only offers end.
            if order.cancelReason == Order.noShow, let driver = order.driver {
                let fee = order.cancellationFee.map { " The no-show fee is \(money($0.amountCents, $0.currency))." } ?? ""
                notifications.append(
                    note(
                        rider, "no_show", "You missed your ride",
                        "\(driver.name) waited at \(place(order.pickup)) and ended the ride as a no-show.\(fee)"))
                if let device = driver.deviceID {
                    commands.append(AddressedDeviceCommand(deviceID: device, command: .stopTracking, issuedAt: time))
                }
            } else if let driver = change.previousStatus.flatMap({ $0 == .new ? nil : order.driver }) ?? nil {
                notifications.append(note(rider, "ride_cancelled", "Ride cancelled", "The ride was cancelled\(reason)."))
                notifications.append(
                    note(driver.id, "ride_cancelled", "Ride cancelled", "The ride from \(place(order.pickup)) was cancelled\(reason)."))
                if let device = driver.deviceID {
                    commands.append(AddressedDeviceCommand(deviceID: device, command: .stopTracking, issuedAt: time))
                }
            } else if order.cancelReason == Order.noDriverFound {
                notifications.append(
                    note(
                        rider, "no_driver_found", "No driver found",
                        "No driver accepted your ride from \(place(order.pickup)) in time. Nothing was charged; please book again."))
            } else {
                notifications.append(note(rider, "ride_cancelled", "Ride cancelled", "Your booking was cancelled\(reason)."))
            }
        case .pickingUp, .droppingOff, .reachedDropoff:
            break
        }
        return (notifications, commands)
    }

    /// The first estimate of a pickup trip: "arriving in N min" to the rider (`rider` from the order).
    public static func arriving(orderID: String, rider: String, estimate: Trip.Estimate, at time: Date) -> UserNotification {
        let minutes = max(1, Int((estimate.arriveAt.timeIntervalSince(time) / 60).rounded()))
        return UserNotification(
            id: "\(orderID)/driver_arriving/\(rider)", userID: rider, kind: "driver_arriving", title: "Driver on the way",
            body: "Arriving in about \(minutes) min (\(estimate.route.distance) m away).", orderID: orderID, createdAt: time)
    }

    /// A trip of the ride runs late (`trip.delayed`, HyperTrack's delay notification): the rider
    /// is told by how much, once per slip (the id carries the trip and the minutes late).
    public static func delayed(orderID: String, rider: String, tripID: String, leg: String?, estimate: Trip.Estimate, at time: Date)
        -> UserNotification
    {
        let late = max(1, Int((Double(estimate.delay ?? 0) / 60).rounded()))
        let minutes = max(1, Int((estimate.arriveAt.timeIntervalSince(time) / 60).rounded()))
        let who = leg == "pickup" ? "Your driver is" : "Your ride is"
        return UserNotification(
            id: "\(orderID)/trip_delayed/\(tripID)/\(late)", userID: rider, kind: "trip_delayed", title: "Running late",
            body: "\(who) running about \(late) min late; now arriving in about \(minutes) min.", orderID: orderID, createdAt: time)
    }

    /// A chat message: its recipient hears of it (the sender knows).
    public static func message(_ message: ChatMessage) -> UserNotification {
        let from = message.senderRole == .driver ? "your driver" : "your rider"
        let text = message.text.count > 140 ? String(message.text.prefix(139)) + "…" : message.text
        return UserNotification(
            id: "\(message.orderID)/chat_message-\(message.number)/\(message.recipientID)", userID: message.recipientID,
            kind: "chat_message", title: "Message from \(from)", body: text, orderID: message.orderID, createdAt: message.sentAt)
    }

    /// Drivers newly offered an order (a decline passed it on, or the offer widened): the same
    /// `new_offer` as the first round's drivers get.
    public static func offered(_ offer: OrderOffered, at time: Date) -> [UserNotification] {
        offer.drivers.map { driver in
            UserNotification(
                id: "\(offer.orderID)/new_offer/\(driver)", userID: driver, kind: "new_offer", title: "New ride nearby",
                body: "Pickup at \(place(offer.pickup)). Accept it before another driver does.", orderID: offer.orderID, createdAt: time)
        }
    }

    /// An offer withdrawn from a driver (they accepted another ride or went offline): their app
    /// drops it. One per withdrawal (the id carries the order's version).
    public static func withdrawn(_ withdrawal: OfferWithdrawn, at time: Date) -> UserNotification {
        let why = withdrawal.reason == .acceptedOther ? "You accepted another ride" : "You went offline"
        return UserNotification(
            id: "\(withdrawal.orderID)/offer_withdrawn/\(withdrawal.driverID)/\(withdrawal.version)", userID: withdrawal.driverID,
            kind: "offer_withdrawn",
            title: "Offer withdrawn", body: "\(why): this ride is no longer offered to you.", orderID: withdrawal.orderID, createdAt: time)
    }

    /// A driver who cancelled before the ride: their phone stops tracking (the order went back to
    /// dispatch; their next ride starts it again).
    public static func driverCancelled(_ cancelled: DriverCancelled) -> [AddressedDeviceCommand] {
        cancelled.deviceID.map { [AddressedDeviceCommand(deviceID: $0, command: .stopTracking, issuedAt: cancelled.cancelledAt)] } ?? []
    }

    /// A rating: the rated user hears how many stars.
    public static func rated(_ rated: OrderRated) -> UserNotification {
        let by = rated.raterRole == .rider ? "Your rider" : "Your driver"
        return UserNotification(
            id: "\(rated.orderID)/rated/\(rated.rateeID)", userID: rated.rateeID, kind: "rated", title: "New rating",
            body: "\(by) gave you \(rated.rating.stars) of 5 stars.", orderID: rated.orderID, createdAt: rated.rating.createdAt)
    }

    /// An operator's answer to a ride report: the reporter reads it.
    public static func reportAnswered(_ report: RideReport) -> UserNotification {
        let answer = report.answer ?? ""
        return UserNotification(
            id: "\(report.orderID)/report_answered-\(report.id)/\(report.reporterID)", userID: report.reporterID, kind: "report_answered",
            title: "Your report was answered", body: answer.count > 300 ? String(answer.prefix(299)) + "…" : answer,
            orderID: report.orderID,
            createdAt: report.answeredAt ?? report.createdAt)
    }

    /// A payment: the rider's receipt (a ride's fare, or a cancellation's fee).
    public static func paid(_ payment: Payment) -> UserNotification {
        let what = payment.kind == Payment.cancellationFee ? "as the fee for a ride cancelled after your driver arrived" : "for your ride"
        return UserNotification(
            id: "\(payment.orderID)/receipt/\(payment.riderID)", userID: payment.riderID, kind: "receipt", title: "Receipt",
            body: "Charged \(money(payment.amountCents, payment.currency)) \(what).", orderID: payment.orderID,
            createdAt: payment.capturedAt)
    }

    /// A refund: the rider hears the charge was given back.
    public static func refunded(_ payment: Payment) -> UserNotification {
        UserNotification(
            id: "\(payment.orderID)/refund/\(payment.riderID)", userID: payment.riderID, kind: "refund", title: "Refund",
            body: "Refunded \(money(payment.amountCents, payment.currency)) to your card.", orderID: payment.orderID,
            createdAt: payment.refundedAt ?? payment.capturedAt)
    }

    /// A ride that could not be charged: the rider is asked to fix their card and pay again. One
    /// per failed charge (the id carries which).
    public static func paymentFailed(_ failed: PaymentFailed, at time: Date) -> UserNotification {
        let next = failed.retriesLeft > 0 ? "Update your card in the app, then pay again." : "Please contact support."
        return UserNotification(
            id: "\(failed.orderID)/payment_failed-\(failed.attempt)/\(failed.riderID)", userID: failed.riderID, kind: "payment_failed",
            title: "Payment failed", body: "We could not charge \(money(failed.amountCents, failed.currency)) for your ride. \(next)",
            orderID: failed.orderID, createdAt: time)
    }

    /// The rider changed the drop-off: they see the new fare quote, the driver (once there is
    /// one) where to go now. One per change (the id carries the order's version).
    public static func destinationChanged(_ change: DestinationChanged, at time: Date) -> [UserNotification] {
        let order = change.order
        let to = place(order.dropoff)
        let quote = money(change.fareQuote.totalCents, change.fareQuote.currency)
        var notifications = [
            UserNotification(
                id: "\(order.id)/destination_changed/\(order.rider.id)/\(order.version)", userID: order.rider.id,
                kind: "destination_changed",
                title: "Destination changed", body: "Now heading to \(to). The fare is now about \(quote).", orderID: order.id,
                createdAt: time)
        ]
        if order.status.hasDriver, let driver = order.driver {
            notifications.append(
                UserNotification(
                    id: "\(order.id)/destination_changed/\(driver.id)/\(order.version)", userID: driver.id, kind: "destination_changed",
                    title: "New destination", body: "Your rider changed the drop-off to \(to).", orderID: order.id, createdAt: time))
        }
        return notifications
    }

    static func place(_ place: Place) -> String {
        place.address ?? String(format: "%.5f, %.5f", place.latitude, place.longitude)
    }

    static func money(_ cents: Int, _ currency: String) -> String {
        String(format: "%@ %d.%02d", currency, cents / 100, cents % 100)
    }
}
