import Bus
import Foundation
import Logging
import RideContract
import RideModels
import ServiceStorage
import Storage
import Wire

/// Turns order and trip events into notifications, device commands and webhook deliveries — every
/// event of both sources, none missed (`EventReactor`), none doubled (notification ids come from
/// what they are about; deliveries are unique per webhook and event). What it sends is the event
/// itself (a chat message, a status, a trip's webhook), so every event is handled as its
/// publisher's log has it (`verifies`), never as the bus carried it: a forged `order.message`
/// reaches nobody.
struct NotificationsReactor {
    static let sources = [BusContract.Service.orders, BusContract.Service.trips]

    let store: any NotificationStorage
    let relay: OutboxRelay
    let sender: WebhookSender
    let pushes: PushSender
    let logger: Logger

    func make(platform: ServiceClient, subscriber: any EventFeed<JSONValue>) -> EventReactor<JSONValue> {
        // In order per order: its pushes follow its statuses, and a pickup trip's estimate is handled
        // after the order events that told who its rider is.
        EventReactor(
            name: "notifications", sources: Self.sources, cursors: store, subscriber: subscriber, logger: logger, orderingKey: Self.orderID,
            verifies: { _ in true },
            fetch: { source, after, limit in
                try await platform.call(Ops.events(of: source), EventsQuery(after: after, limit: limit))
            }, handle: { event in await handle(event) })
    }

    /// The order an event is about: an order's status, offer, message, rating, payment or report, or a
    /// trip of one (its metadata).
    @Sendable static func orderID(of event: CloudEvent<JSONValue>) -> String? {
        let data = event.data
        return data["order"]?["id"]?.stringValue ?? data["order_id"]?.stringValue ?? data["message"]?["order_id"]?.stringValue
            ?? data["payment"]?["order_id"]?.stringValue ?? data["report"]?["order_id"]?.stringValue
            ?? data["data"]?["trip_metadata"]?["order_id"]?.stringValue
    }

    func handle(_ event: CloudEvent<JSONValue>) async {
        var notifications: [UserNotification] = []
        var commands: [AddressedDeviceCommand] = []
        var rider: (String, String)?
        var webhookItem: JSONValue?
        do {
            if event.source == BusContract.Service.orders, event.type != Events.orderStatus.type {
                switch event.type {
                case Events.orderMessage.type:
                    notifications = [NotificationRules.message(try event.data.decode(ChatMessageSent.self).message)]
                case Events.orderOffered.type:
                    notifications = NotificationRules.offered(try event.data.decode(OrderOffered.self), at: event.time)
                case Events.orderOfferWithdrawn.type:
                    notifications = [NotificationRules.withdrawn(try event.data.decode(OfferWithdrawn.self), at: event.time)]
                case Events.orderDriverCancelled.type:
                    commands = NotificationRules.driverCancelled(try event.data.decode(DriverCancelled.self))
                case Events.orderRated.type: notifications = [NotificationRules.rated(try event.data.decode(OrderRated.self))]
                case Events.orderPaid.type: notifications = [NotificationRules.paid(try event.data.decode(OrderPaid.self).payment)]
                case Events.orderRefunded.type:
                    notifications = [NotificationRules.refunded(try event.data.decode(OrderRefunded.self).payment)]
                case Events.orderPaymentFailed.type:
                    notifications = [NotificationRules.paymentFailed(try event.data.decode(PaymentFailed.self), at: event.time)]
                case Events.orderDestinationChanged.type:
                    notifications = NotificationRules.destinationChanged(try event.data.decode(DestinationChanged.self), at: event.time)
                case Events.orderReportAnswered.type:
                    notifications = [NotificationRules.reportAnswered(try event.data.decode(ReportAnswered.self).report)]
                default: break
                }
            } else if event.source == BusContract.Service.orders {
                let change = try event.data.decode(OrderStatusChanged.self)
                (notifications, commands) = NotificationRules.reactions(to: change, at: event.time)
                // Kept from the order's first status on, not only from its acceptance: events are handled
                // concurrently (and by several instances), so the acceptance may still be being stored
                // when the pickup trip's first estimate asks who the rider is.
                rider = (change.order.id, change.order.rider.id)
                webhookItem = [
                    "type": "order", "created_at": .string(RFC3339.format(event.time)),
                    "data": [
                        "value": .string(change.order.status.rawValue), "order_id": .string(change.order.id),
                        "order": event.data["order"] ?? .null,
                    ],
                ]
            } else {
                let tripEvent = try event.data.decode(TripEvent.self)
                webhookItem = event.data  // already HyperTrack's webhook shape
                if tripEvent.data.value == "eta", tripEvent.data.tripMetadata?["leg"] == "pickup",
                    case .string(let orderID)? = tripEvent.data.tripMetadata?["order_id"], let estimate = tripEvent.data.estimate,
                    let riderID = try await store.rider(of: orderID)
                {
                    notifications = [NotificationRules.arriving(orderID: orderID, rider: riderID, estimate: estimate, at: event.time)]
                }
                if event.type == Events.tripDelayed.type, case .string(let orderID)? = tripEvent.data.tripMetadata?["order_id"],
                    let estimate = tripEvent.data.estimate, let riderID = try await store.rider(of: orderID)
                {
                    notifications = [
                        NotificationRules.delayed(
                            orderID: orderID, rider: riderID, tripID: tripEvent.data.tripID,
                            leg: tripEvent.data.tripMetadata?["leg"]?.stringValue,
                            estimate: estimate, at: event.time)
                    ]
                }
            }
        } catch {
            logger.error(
                "an event does not decode; skipped",
                metadata: ["source": "\(event.source)", "sequence": "\(event.sequence)", "error": "\(error)"])
            return
        }
        var body: [UInt8]?
        if let webhookItem { body = try? JSONCoding.encode(JSONValue.array([webhookItem])) }
        do {
            _ = try await store.record(
                eventID: "\(event.source)/\(event.sequence)", notifications: notifications, commands: commands,
                webhookBody: body, rider: rider)
            relay.notify()
            sender.notify()
            pushes.notify()
        } catch {
            logger.error(
                "cannot store an event's notifications; a restart replays it",
                metadata: ["sequence": "\(event.sequence)", "error": "\(error)"])
        }
    }
}
