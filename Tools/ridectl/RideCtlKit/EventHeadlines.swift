import RideContract
import Wire

/// What `ridectl tail` shows of each kind of event: the few fields an operator reads at a glance
/// (an order: id, status, rider, driver, version; a location: device, position, speed; a trip: id,
/// ETA), by event type. A type not listed falls back to the whole payload flattened. A test checks
/// every event kind of the contract is listed and every path exists in its payload's schema.
public enum EventHeadlines {
    public struct Field: Sendable, Equatable {
        /// What the line calls it (`status=ACCEPTED`).
        public let label: String
        /// Where it is in the event's data (`order.status`).
        public let path: [String]
        /// A unit appended to the value (`eta=162s`).
        public let unit: String
        /// Digits after the point a number is shown with (nil: as many as it has, up to six).
        public let decimals: Int?

        public init(_ label: String, _ path: String, unit: String = "", decimals: Int? = nil) {
            self.label = label
            self.path = path.split(separator: ".").map(String.init)
            self.unit = unit
            self.decimals = decimals
        }
    }

    private static let trip: [Field] = [
        Field("trip", "data.trip_id"), Field("eta", "data.estimate.route.remaining_duration", unit: "s"),
        Field("left", "data.estimate.route.distance", unit: "m"), Field("late", "data.estimate.delay", unit: "s"),
    ]

    public static let fields: [String: [Field]] = [
        Events.orderStatus.type: [
            Field("order", "order.id"), Field("status", "order.status"), Field("rider", "order.rider.id"),
            Field("driver", "order.driver.id"), Field("v", "order.version"),
        ],
        Events.orderMessage.type: [Field("order", "message.order_id"), Field("from", "message.sender_role"), Field("n", "message.number")],
        Events.orderOffered.type: [Field("order", "order_id"), Field("round", "round"), Field("drivers", "drivers")],
        Events.orderOfferWithdrawn.type: [Field("order", "order_id"), Field("driver", "driver_id"), Field("reason", "reason")],
        Events.orderRated.type: [Field("order", "order_id"), Field("by", "rater_role"), Field("stars", "rating.stars")],
        Events.orderDriverCancelled.type: [Field("order", "order_id"), Field("driver", "driver_id"), Field("redispatch", "redispatch")],
        Events.orderPaid.type: [
            Field("order", "payment.order_id"), Field("cents", "payment.amount_cents"), Field("currency", "payment.currency"),
        ],
        Events.orderPaymentFailed.type: [
            Field("order", "order_id"), Field("rider", "rider_id"), Field("attempt", "attempt"), Field("reason", "reason"),
        ],
        Events.orderRefunded.type: [
            Field("order", "payment.order_id"), Field("cents", "payment.amount_cents"), Field("kind", "payment.kind"),
        ],
        Events.orderDestinationChanged.type: [
            Field("order", "order.id"), Field("to", "order.dropoff.address"), Field("cents", "fare_quote.total_cents"),
            Field("v", "order.version"),
        ],
        Events.orderReportAnswered.type: [
            Field("report", "report.id"), Field("order", "report.order_id"), Field("reporter", "report.reporter_id"),
            Field("category", "report.category"),
        ],
        Events.tripCreated.type: trip,
        Events.tripDestinationArrival.type: [Field("trip", "data.trip_id"), Field("arrived", "data.arrived_at")],
        Events.tripETA.type: trip,
        Events.tripRerouted.type: trip,
        Events.tripDelayed.type: trip,
        Events.tripDestinationChanged.type: trip,
        Events.tripCompleted.type: [
            Field("trip", "data.trip_id"), Field("distance", "data.summary.distance", unit: "m"),
            Field("duration", "data.summary.duration", unit: "s"),
        ],
        Events.deviceLocation.type: [
            Field("device", "device_id"), Field("at", "location.coordinates"), Field("speed", "speed", unit: "m/s", decimals: 1),
        ],
        Events.deviceStatus.type: [Field("device", "device_id"), Field("status", "value"), Field("available", "available")],
        Events.deviceCommand.type: [Field("command", "command")],
        Events.userRegistered.type: [Field("user", "user.id"), Field("role", "user.role"), Field("name", "user.name")],
        Events.userSuspended.type: [
            Field("user", "user_id"), Field("role", "role"), Field("device", "device_id"), Field("reason", "reason"),
        ],
        Events.userApprovalLapsed.type: [Field("user", "user_id"), Field("device", "device_id"), Field("reason", "reason")],
        Events.notification.type: [Field("user", "user_id"), Field("kind", "kind"), Field("order", "order_id")],
    ]

    /// `label=value` for each field present in `data`, in order (absent or null ones left out).
    public static func line(_ fields: [Field], of data: JSONValue) -> String {
        fields.compactMap { field in
            guard let value = value(at: field.path, in: data), value != .null else { return nil }
            let text =
                if let decimals = field.decimals, let number = value.numberValue { String(format: "%.\(decimals)f", number) } else {
                    EventLineFormatter.scalar(value)
                }
            return "\(field.label)=\(text)\(field.unit)"
        }.joined(separator: " ")
    }

    static func value(at path: [String], in data: JSONValue) -> JSONValue? {
        var current = data
        for key in path {
            guard case .object(let members) = current, let next = members[key] else { return nil }
            current = next
        }
        return current
    }
}
