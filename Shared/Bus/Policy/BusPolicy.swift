/// Who may do what on a secured bus. Every connection to a CURVE bus is admitted under the name of
/// its client key (`clients/NAME.pub`, the ZAP handler's user id); the name gives the key its role
/// — the name itself (`orders`), or its part before the first `-` (`operator-alice` is an operator)
/// — and the role its permissions. A key whose name gives no role may connect and do nothing.
///
/// The broker checks each worker's READY and each request against it, the event forwarder each
/// event's topic and each subscription. A bus without CURVE has no names to go by, and no policy:
/// it must not leave its machine (`--insecure-bus`).
public struct BusPolicy: Sendable {
    public let roles: [String: BusPermissions]

    public init(roles: [String: BusPermissions]) { self.roles = roles }

    /// The role a key named `name` has, whether or not it is one of `roles`.
    public static func roleName(ofKey name: String) -> String {
        name.split(separator: "-", maxSplits: 1).first.map(String.init) ?? name
    }

    /// What the key named `name` may do; nil when its name gives it no role.
    public func permissions(ofKey name: String) -> BusPermissions? {
        roles[name] ?? roles[Self.roleName(ofKey: name)]
    }

    /// Why the key `sender` (nil: a connection without a key name) may not do `action`, or nil when it may.
    public func refusal(of action: BusAction, by sender: String?) -> BusRefusal? {
        guard let sender else {
            return BusRefusal(action: action, key: nil, reason: "the connection has no CURVE key name, and this bus admits only named keys")
        }
        guard let permissions = permissions(ofKey: sender) else {
            return BusRefusal(
                action: action, key: sender, reason: "key '\(sender)' has no role (roles: \(roles.keys.sorted().joined(separator: ", ")))")
        }
        let allowed: Bool
        switch action {
        case .serve(let service): allowed = permissions.mayServe(service)
        case .call(let service, let op): allowed = permissions.mayCall(service, op: op)
        case .publish(let topic): allowed = permissions.mayPublish(topic: topic)
        case .subscribe(let prefix): allowed = permissions.maySubscribe(prefix)
        }
        guard !allowed else { return nil }
        return BusRefusal(action: action, key: sender, reason: "key '\(sender)' (role \(Self.roleName(ofKey: sender))) may not \(action)")
    }
}

/// Something a peer asks the bus to do.
public enum BusAction: Sendable, Equatable, CustomStringConvertible {
    case serve(service: String)
    case call(service: String, op: String)
    case publish(topic: String)
    case subscribe(prefix: String)

    /// For metrics: `serve`, `call`, `publish`, `subscribe`.
    public var kind: String {
        switch self {
        case .serve: "serve"
        case .call: "call"
        case .publish: "publish"
        case .subscribe: "subscribe"
        }
    }

    public var description: String {
        switch self {
        case .serve(let service): "serve '\(service)'"
        case .call(let service, let op): "call \(service).\(op)"
        case .publish(let topic): "publish on '\(topic)'"
        case .subscribe(let prefix): prefix.isEmpty ? "subscribe to every topic" : "subscribe to '\(prefix)'"
        }
    }
}

/// A refused action, with the reason the peer is told and the log says.
public struct BusRefusal: Sendable, Equatable, CustomStringConvertible {
    public var action: BusAction
    /// The sender's key name (nil: none).
    public var key: String?
    public var reason: String
    /// The role the refusal is counted under (`none` for a key without a name or role).
    public var role: String { key.map(BusPolicy.roleName(ofKey:)) ?? "none" }
    public var description: String { reason }
}
