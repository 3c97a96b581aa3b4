import Foundation
import RideModels
import Wire

/// Every kind of message the live WebSockets send, declared once: its `type`, its parts and when
/// it is sent. `/v1/orders/{id}/live` sends `orderKinds`, `/v1/me/live` `userKinds`.
@Catalog("LiveKind", "LiveBodyKind")
enum LiveKinds {
    static let snapshot = LiveBodyKind<LiveSnapshot>("snapshot", "first, without `?after=`")
    static let status = LiveKind<Sequenced, OrderStatusChanged>("status", "every status change, once each, in order")
    static let location = LiveKind<Watched, DeviceLocationEvent>("location", "each fix of the driver's phone while the order has a driver")
    static let driverStatus = LiveKind<Watched, DeviceStatusEvent>(
        "driver_status",
        "the driver's phone starts or stops reporting (`inactive` after tracking's `--inactive-after-s` of silence) or the driver goes "
            + "on or off duty, while the order has a driver: tracking's `device.status.<id>`")
    static let eta = LiveBodyKind<LiveETA>(
        "eta", "the current trip's new estimate (at most every 5 s), and at once when its destination changed")
    static let destinationChanged = LiveKind<Sequenced, DestinationChanged>(
        "destination_changed",
        "the rider changed the drop-off (`POST /v1/orders/{id}/destination`); once each, in order, like a status")
    static let chat = LiveBodyKind<LiveChat>("chat", "each chat message, once, to the rider and the driver only")
    static let notification = LiveBodyKind<LiveNotification>("notification", "each notification made for the caller")
    static let nearbyCars = LiveBodyKind<LiveNearbyCars>(
        "nearby_cars", "a rider's `watch_nearby`: at once, then every 5 s while it watches")
    static let ack = LiveBodyKind<LiveAck>("ack", "a driver's `batch`, stored: tracking's answer, in order")
    static let error = LiveBodyKind<LiveError>(
        "error",
        "a refused connection, watch or batch, an idle socket or a token no longer good (then the socket closes with 4000 + status)")

    /// What `/v1/orders/{id}/live` sends.
    static let orderKinds = [
        snapshot.descriptor, status.descriptor, location.descriptor, driverStatus.descriptor, eta.descriptor,
        destinationChanged.descriptor, chat.descriptor, error.descriptor,
    ]
    /// What `/v1/me/live` sends.
    static let userKinds = [notification.descriptor, nearbyCars.descriptor, ack.descriptor, error.descriptor]

    /// The table of docs/services/gateway.md: each kind, its members, the sockets that send it, when.
    static var table: String {
        var lines = ["| type | fields | sent on | when |", "|---|---|---|---|"]
        for kind in catalog {
            let members = kind.members().sorted { $0.key < $1.key }.map { "`\($0.key)`" }.joined(separator: ", ")
            let sockets = [(LiveRoute.orderPath, orderKinds), (LiveRoute.notificationsPath, userKinds)].filter {
                $0.1.contains { $0.type == kind.type }
            }
            let on = sockets.map { "`/v1/\($0.0)`" }.joined(separator: ", ")
            lines.append("| `\(kind.type)` | \(members) | \(on) | \(kind.summary) |")
        }
        return lines.joined(separator: "\n")
    }
}

/// What the gateway adds to an `orders` event: its sequence in orders' outbox, to resume after.
@WireModel
struct Sequenced: Codable, Sendable, Equatable {
    var sequence: UInt64
}

/// What the gateway adds to a device's event: the order watched, whose driver the device is.
@WireModel
struct Watched: Codable, Sendable, Equatable {
    var orderID: String
}

/// `snapshot`: the order now, and the sequence to resume after.
@WireModel
struct LiveSnapshot: Codable, Sendable, Equatable {
    var sequence: UInt64
    var order: Order
}

/// `chat`: an `order.message` event, its sequence in orders' outbox.
@WireModel
struct LiveChat: Codable, Sendable, Equatable {
    var orderID: String
    var sequence: UInt64
    var message: ChatMessage
}

/// `eta`: the current trip's estimate (with `route.steps`, turn by turn, along roads).
@WireModel
struct LiveETA: Codable, Sendable, Equatable {
    var orderID: String
    var tripID: String
    var estimate: Trip.Estimate?
}

/// `notification`: one made for the caller (missed ones are in `GET /v1/notifications`).
@WireModel
struct LiveNotification: Codable, Sendable, Equatable {
    var notification: UserNotification
}

/// `nearby_cars`: the reply of `GET /v1/drivers/nearby` for the point watched.
@WireModel
struct LiveNearbyCars: Codable, Sendable, Equatable {
    var nearbyCars: NearbyCars
}

/// `ack`: a batch stored; the phone may forget its fixes.
@WireModel
struct LiveAck: Codable, Sendable, Equatable {
    var batchID: JSONValue?
    var ack: IngestAck
}

/// `error`: what was refused, with the HTTP status it would have had; `batch_id` for a batch.
@WireModel
struct LiveError: Codable, Sendable, Equatable {
    var status: Int
    var error: ErrorBody.Detail
    var batchID: JSONValue?
}
