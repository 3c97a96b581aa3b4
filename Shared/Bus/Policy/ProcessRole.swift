import Synchronization

/// The role this process holds on the bus (`BusPolicy`), checked before a call or a subscription
/// leaves it: one its role may not make fails at once with the bus's own reason (`403 forbidden`),
/// on a plain bus as on a secured one. So a role missing an op shows in every test through the real
/// processes the way it would in production, where the bus refuses it.
public enum ProcessRole {
    private static let current = Mutex<HeldRole?>(nil)

    /// From now on this process is held to `role`.
    public static func adopt(_ role: HeldRole) { current.withLock { $0 = role } }

    static var held: HeldRole? { current.withLock { $0 } }
}

/// A role as one process holds it: its name and what it may do.
public struct HeldRole: Sendable {
    public let name: String
    public let permissions: BusPermissions

    public init(name: String, permissions: BusPermissions) {
        self.name = name
        self.permissions = permissions
    }

    /// Why it may not call `service.op` (nil: it may; the broker's own `mmi.*` are open to all).
    public func refusal(toCall service: String, op: String) -> BusRefusal? {
        guard !service.hasPrefix("mmi."), !permissions.mayCall(service, op: op) else { return nil }
        return BusRefusal(
            action: .call(service: service, op: op), key: name,
            reason: "this process (role \(name)) may not call \(service).\(op): see RideContract.Roles")
    }

    /// Why it may not subscribe to `prefix` (nil: it may).
    public func refusal(toSubscribe prefix: String) -> BusRefusal? {
        guard !permissions.maySubscribe(prefix) else { return nil }
        return BusRefusal(
            action: .subscribe(prefix: prefix), key: name,
            reason: "this process (role \(name)) may not subscribe to '\(prefix)': see RideContract.Roles")
    }
}
