/// The platform's processes and the ports they listen on by default, declared once: every
/// executable's defaults and `ridectl up` read them, and `DeployPortsTests` holds compose,
/// Kubernetes, Prometheus and the image's health check to them.
public enum RideProcess: String, CaseIterable, Sendable {
    case bus, users, orders, trips, tracking, notifications, gateway

    /// `ride-users`.
    public var executable: String { "ride-" + rawValue }

    /// Its health and metrics port (`--http`: /health, /livez, /readyz, /metrics).
    public var httpPort: Int {
        switch self {
        case .bus: 9100
        case .users: 9101
        case .orders: 9102
        case .trips: 9103
        case .tracking: 9104
        case .notifications: 9105
        case .gateway: 9106
        }
    }

    /// Its default `--http`: every interface (a container's or a pod's), its own port.
    public var httpDefault: String { "0.0.0.0:\(httpPort)" }
}

/// The bus's, the device ingest's and the apps' ports.
public enum PlatformPorts {
    /// Event ingress (XSUB): publishers connect here.
    public static let eventIngress = 5555
    /// Event egress (XPUB): subscribers connect here.
    public static let eventEgress = 5556
    /// The 7/MDP broker (ROUTER).
    public static let broker = 5557
    /// Tracking's device ingest (ROUTER).
    public static let trackingIngest = 5558
    /// The gateway's HTTP listener for the apps.
    public static let gateway = 8080
    /// How far each further tracking shard on one host moves its ports (shard K: port + 100 K).
    public static let shardStride = 100
}
