import Bus
import Wire

/// The platform's contract as data: every op and every event kind, for what is derived from
/// them — the docs' tables, the fuzzer's catalog, the API document, the property tests.
public enum RideContract {
    /// Every op, service by service, each in declaration order.
    public static let ops: [OpDescriptor] =
        Ops.Users.catalog + Ops.Orders.catalog + Ops.Trips.catalog + Ops.Tracking.catalog + Ops.Notifications.catalog

    /// Every event kind, in declaration order.
    public static let events: [EventDescriptor] = Events.catalog

    /// The ops of `service`, in declaration order.
    public static func ops(of service: String) -> [OpDescriptor] { ops.filter { $0.service == service } }
}
