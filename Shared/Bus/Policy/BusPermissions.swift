import Foundation

/// What one role may do on the bus: the services it may serve (register workers for), the ops it
/// may call, the topic prefixes it may publish and those it may subscribe to. Plain strings, so
/// the broker and the forwarder check them without knowing the contract (`RideContract.Roles`
/// declares them).
public struct BusPermissions: Sendable, Equatable {
    /// Service names it may register as a worker; a name ending in `*` is a prefix (`tracking.shard.*`).
    public var serves: [String]
    /// The ops it may call, by service name (a key ending in `*` is a prefix); an empty set means
    /// every op of that service.
    public var calls: [String: Set<String>]
    /// Topic prefixes its events may have.
    public var publishes: [String]
    /// Prefixes it may subscribe to: a subscription must start with one of them ("" is everything).
    public var subscribes: [String]

    public init(serves: [String] = [], calls: [String: Set<String>] = [:], publishes: [String] = [], subscribes: [String] = []) {
        self.serves = serves
        self.calls = calls
        self.publishes = publishes
        self.subscribes = subscribes
    }

    /// Everything: what a bus without a policy allows every peer.
    public static let everything = BusPermissions(serves: ["*"], calls: ["*": []], publishes: [""], subscribes: [""])

    public func mayServe(_ service: String) -> Bool {
        serves.contains { Self.matches(pattern: $0, service) }
    }

    public func mayCall(_ service: String, op: String) -> Bool {
        calls.contains { pattern, ops in Self.matches(pattern: pattern, service) && (ops.isEmpty || ops.contains(op)) }
    }

    /// Whether an event on `topic` (its first frame's bytes) may come from this role.
    public func mayPublish(topic: UnsafeRawBufferPointer) -> Bool {
        publishes.contains { prefix in Self.hasPrefix(topic, prefix) }
    }

    public func mayPublish(topic: String) -> Bool {
        Array(topic.utf8).withUnsafeBytes { mayPublish(topic: $0) }
    }

    /// Whether a subscription to `prefix` may be given: it must be at least as narrow as one the
    /// role may have (`order.status.` under `order.`; not `ord`, which would also hear `ordinary.`).
    public func maySubscribe(_ prefix: String) -> Bool {
        subscribes.contains { prefix.utf8.starts(with: $0.utf8) }
    }

    static func matches(pattern: String, _ name: String) -> Bool {
        if pattern.hasSuffix("*") { return name.utf8.starts(with: pattern.utf8.dropLast()) }
        return pattern == name
    }

    /// Whether `bytes` starts with `prefix`, without copying either (native strings keep their UTF-8 contiguous).
    static func hasPrefix(_ bytes: UnsafeRawBufferPointer, _ prefix: String) -> Bool {
        prefix.utf8.withContiguousStorageIfAvailable { prefix in
            prefix.count <= bytes.count && (prefix.isEmpty || memcmp(bytes.baseAddress!, prefix.baseAddress!, prefix.count) == 0)
        } ?? bytes.starts(with: prefix.utf8)
    }
}
