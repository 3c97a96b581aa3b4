import Bus
import RideModels
import Wire

/// Every kind of event the platform publishes, declared once with its topic and payload type.
/// A subscriber that wants all of a source's events subscribes to its root (`Events.orderRoot`),
/// so a jump in the source's sequence is a lost event, not one it did not ask for.
@Catalog("EventKind")
public enum Events {
    public static let orderStatus = EventKind<OrderStatusChanged>(
        type: "order.status", key: "the new status", source: BusContract.Service.orders,
        "an order changed status; the order as it is now and the status before")
    public static let orderMessage = EventKind<ChatMessageSent>(
        type: "order.message", key: "order id", source: BusContract.Service.orders, "a chat message between rider and driver")
    public static let orderOffered = EventKind<OrderOffered>(
        type: "order.offered", source: BusContract.Service.orders, "an order was offered to drivers")
    public static let orderOfferWithdrawn = EventKind<OfferWithdrawn>(
        type: "order.offer_withdrawn", source: BusContract.Service.orders,
        "an offer was withdrawn from a driver who accepted another ride or went offline")
    public static let orderRated = EventKind<OrderRated>(
        type: "order.rated", source: BusContract.Service.orders, "a rider or driver rated the other")
    public static let orderDriverCancelled = EventKind<DriverCancelled>(
        type: "order.driver_cancelled", source: BusContract.Service.orders,
        "the driver cancelled before the ride; the order went back to dispatch")
    public static let orderPaid = EventKind<OrderPaid>(
        type: "order.paid", source: BusContract.Service.orders, "a completed ride's fare was charged")
    public static let orderPaymentFailed = EventKind<PaymentFailed>(
        type: "order.payment_failed", source: BusContract.Service.orders,
        "an order's charge (a ride's fare, a cancellation's fee) failed; its rider is asked to fix their card")
    public static let orderRefunded = EventKind<OrderRefunded>(
        type: "order.refunded", source: BusContract.Service.orders,
        "an operator refunded an order's charge (a ride's fare or a cancellation's fee)")
    public static let orderDestinationChanged = EventKind<DestinationChanged>(
        type: "order.destination_changed", source: BusContract.Service.orders,
        "the rider changed the drop-off; the order now, the drop-off before and the new fare quote")
    public static let orderReportAnswered = EventKind<ReportAnswered>(
        type: "order.report_answered", source: BusContract.Service.orders, "an operator answered a rider's or driver's ride report")

    public static let tripCreated = EventKind<TripEvent>(
        type: "trip.created", source: BusContract.Service.trips, "a trip started tracking a device to a destination")
    public static let tripDestinationArrival = EventKind<TripEvent>(
        type: "trip.destination_arrival", source: BusContract.Service.trips, "the device reached the trip's destination")
    public static let tripETA = EventKind<TripEvent>(
        type: "trip.eta", source: BusContract.Service.trips, "a new estimate of the arrival")
    public static let tripRerouted = EventKind<TripEvent>(
        type: "trip.rerouted", source: BusContract.Service.trips,
        "the device left the trip's route and a new route was planned from where it is (with the new estimate)")
    public static let tripDelayed = EventKind<TripEvent>(
        type: "trip.delayed", source: BusContract.Service.trips,
        "the estimate slipped past the first one by more than the delay threshold (once per slip; estimate.delay in seconds)")
    public static let tripDestinationChanged = EventKind<TripEvent>(
        type: "trip.destination_changed", source: BusContract.Service.trips,
        "the trip's destination changed (data.destination), with the estimate to it")
    public static let tripCompleted = EventKind<TripEvent>(
        type: "trip.completed", source: BusContract.Service.trips, "a trip ended, with its summary")

    public static let deviceLocation = EventKind<DeviceLocationEvent>(
        type: "device.location", key: "device id", source: BusContract.Service.tracking, "a device's new location")
    public static let deviceStatus = EventKind<DeviceStatusEvent>(
        type: "device.status", key: "device id", source: BusContract.Service.tracking, "a device went on or off duty, or stopped reporting")
    public static let deviceCommand = EventKind<DeviceCommandEvent>(
        type: "device.command", key: "device id", source: BusContract.Service.notifications,
        "a silent command to a driver's phone (start or stop tracking)")

    public static let userRegistered = EventKind<UserRegistered>(
        type: "user.registered", source: BusContract.Service.users, "a rider or driver registered")
    public static let userSuspended = EventKind<UserSuspended>(
        type: "user.suspended", source: BusContract.Service.users,
        "an operator suspended an account: gateways drop its tokens and sockets, tracking its device's credential and availability")
    public static let userApprovalLapsed = EventKind<DriverApprovalLapsed>(
        type: "user.approval_lapsed", source: BusContract.Service.users,
        "a driver's approval ended (a document expired, or an operator withdrew it): tracking takes their device off duty")
    public static let notification = EventKind<UserNotification>(
        type: "notification", key: "user id", source: BusContract.Service.notifications, "a message for one user (the apps' live feed)")

    /// Topic roots: subscribe to one to get everything a source publishes under it.
    public static let orderRoot = "order."
    public static let tripRoot = "trip."
    public static let userRoot = "user."

    /// The topic roots each source publishes under. A subscriber sees every sequence of a source
    /// only when its prefixes cover all of that source's roots; otherwise a jump in `sequence` is
    /// just the events it did not ask for (how `ridectl tail` decides to warn about a gap).
    public static let topicRoots: [String: [String]] = [
        BusContract.Service.users: [userRoot],
        BusContract.Service.orders: [orderRoot],
        BusContract.Service.trips: [tripRoot],
        BusContract.Service.tracking: [deviceLocation.topic, deviceStatus.topic],  // per device: see deviceSource
        BusContract.Service.notifications: [notification.topic, deviceCommand.topic],
    ]

    /// The source of one device's events: tracking sequences each device's stream on its own, so
    /// a subscriber to `device.location.<id>` sees every sequence of that device (and a gap means a
    /// lost event, not another device's).
    public static func deviceSource(_ deviceID: String) -> String { "tracking/devices/\(deviceID)" }

    /// The topic roots of `source` (per-device sources included).
    public static func roots(of source: String) -> [String]? {
        if let roots = topicRoots[source] { return roots }
        let devicePrefix = "tracking/devices/"
        if source.hasPrefix(devicePrefix) {
            let id = source.dropFirst(devicePrefix.count)
            return [deviceLocation.topic + id, deviceStatus.topic + id]
        }
        return nil
    }

    /// Whether subscribing to `prefixes` receives everything `source` publishes. Sources without
    /// known roots are covered only by a subscription to everything ("").
    public static func prefixes(_ prefixes: [String], cover source: String) -> Bool {
        if prefixes.contains("") { return true }
        guard let roots = roots(of: source) else { return false }
        return roots.allSatisfy { root in prefixes.contains { root.hasPrefix($0) } }
    }
}
