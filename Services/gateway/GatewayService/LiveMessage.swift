import RideModels
import Wire

/// What a live connection sends: one JSON object per WebSocket text message, `{"type": …}` and
/// the members of that kind's parts (`LiveKinds`): an event's payload as the bus carried it and
/// what the gateway adds (its sequence, the order watched), or a body of the gateway's own. The
/// API document lists each WebSocket route's kinds with their schemas (`x-messages`), and
/// docs/services/gateway.md's table is `LiveKinds.table`.
enum LiveMessage: Sendable, Equatable {
    case snapshot(LiveSnapshot)
    case status(Sequenced, OrderStatusChanged)
    case location(Watched, DeviceLocationEvent)
    case driverStatus(Watched, DeviceStatusEvent)
    case eta(LiveETA)
    case destinationChanged(Sequenced, DestinationChanged)
    case chat(LiveChat)
    case notification(LiveNotification)
    case nearbyCars(LiveNearbyCars)
    case ack(LiveAck)
    case error(LiveError)
    /// Within the gateway only: an account was suspended. The hub tells every connection; the
    /// relay closes the suspended person's and passes it to no one.
    case accountSuspended(userID: String)

    /// The message as sent (nil for `accountSuspended`, which is never sent).
    var text: String? {
        switch self {
        case .snapshot(let body): LiveKinds.snapshot.text(body)
        case .status(let added, let event): LiveKinds.status.text(added, event)
        case .location(let added, let event): LiveKinds.location.text(added, event)
        case .driverStatus(let added, let event): LiveKinds.driverStatus.text(added, event)
        case .eta(let body): LiveKinds.eta.text(body)
        case .destinationChanged(let added, let event): LiveKinds.destinationChanged.text(added, event)
        case .chat(let body): LiveKinds.chat.text(body)
        case .notification(let body): LiveKinds.notification.text(body)
        case .nearbyCars(let body): LiveKinds.nearbyCars.text(body)
        case .ack(let body): LiveKinds.ack.text(body)
        case .error(let body): LiveKinds.error.text(body)
        case .accountSuspended: nil
        }
    }

    /// `{"type":"error","status":…,"error":{"code","message"}}`.
    static func error(status: Int, code: String, message: String, batchID: JSONValue? = nil) -> LiveMessage {
        .error(LiveError(status: status, error: ErrorBody(code: code, message: message).error, batchID: batchID))
    }

    /// The order the message carries as it changed (a status, a new drop-off), with its sequence:
    /// sent once each, in order, and only while the viewer is one of its parties.
    var orderChange: (sequence: UInt64, order: Order)? {
        switch self {
        case .status(let added, let event): (added.sequence, event.order)
        case .destinationChanged(let added, let event): (added.sequence, event.order)
        default: nil
        }
    }

    /// The message with its order as `viewer` may see it (`OrderPrivacy`: the bus carries the whole order).
    func shown(to viewer: Caller) -> LiveMessage {
        switch self {
        case .snapshot(var body):
            body.order = OrderPrivacy.shown(body.order, to: viewer)
            return .snapshot(body)
        case .status(let added, var event):
            event.order = OrderPrivacy.shown(event.order, to: viewer)
            return .status(added, event)
        case .destinationChanged(let added, var event):
            event.order = OrderPrivacy.shown(event.order, to: viewer)
            return .destinationChanged(added, event)
        default: return self
        }
    }
}

/// One kind of live message made of an event's payload (`Body`) and what the gateway adds to it
/// (`Added`), their members side by side with `type`.
struct LiveKind<Added: WireValue, Body: WireValue>: Sendable {
    let type: String
    let summary: String

    init(_ type: String, _ summary: String) {
        self.type = type
        self.summary = summary
    }

    func text(_ added: Added, _ body: Body) -> String { LiveKindDescriptor.text(type, [added, body]) }

    var descriptor: LiveKindDescriptor {
        LiveKindDescriptor(type: type, summary: summary) { Added.wireSchema.members + Body.wireSchema.members }
    }
}

/// One kind of live message that is a body of the gateway's own, its members beside `type`.
struct LiveBodyKind<Body: WireValue>: Sendable {
    let type: String
    let summary: String

    init(_ type: String, _ summary: String) {
        self.type = type
        self.summary = summary
    }

    func text(_ body: Body) -> String { LiveKindDescriptor.text(type, [body]) }

    var descriptor: LiveKindDescriptor { LiveKindDescriptor(type: type, summary: summary) { Body.wireSchema.members } }
}

/// A kind of live message as data: the API document's and the docs table's.
struct LiveKindDescriptor: Sendable {
    let type: String
    /// When it is sent (the schema's description).
    let summary: String
    /// Beside `type`: the added part's and the body's, read when a document or a table is made.
    let members: @Sendable () -> [WireProperty]

    /// `{"type":"<type>", …each part's members}` (each part an object).
    static func text(_ type: String, _ parts: [any JSONWritable]) -> String {
        var out = Array(#"{"type":"#.utf8)
        JSONValue.string(type).writeJSON(to: &out)
        for part in parts {
            var members: [UInt8] = []
            part.writeJSON(to: &members)
            guard members.count > 2 else { continue }
            out.append(UInt8(ascii: ","))
            out.append(contentsOf: members.dropFirst().dropLast())
        }
        out.append(UInt8(ascii: "}"))
        return String(decoding: out, as: UTF8.self)
    }

    /// The component's name in the API document: `destination_changed` is `LiveDestinationChangedMessage`.
    var schemaName: String {
        "Live" + type.split(separator: "_").map { $0.prefix(1).uppercased() + $0.dropFirst() }.joined() + "Message"
    }
}
