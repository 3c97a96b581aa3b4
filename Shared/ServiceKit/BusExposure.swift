import Bus
import SettingsKit
import ZeroMQ

/// One setting that names bus endpoints a process binds or connects to: the bus's sockets, a
/// service's bus address, tracking's device ingest.
public struct BusEndpointSetting: Sendable, Equatable {
    /// What it is and where it is set, for the error: `broker (--broker, RIDE_BROKER)`.
    public var setting: String
    /// Its endpoints (a bus address may name several, separated by commas).
    public var endpoints: [String]

    public init(_ setting: String, _ endpoints: [String]) {
        self.setting = setting
        self.endpoints = endpoints
    }

    /// A bus address as a service holds it: endpoints separated by commas.
    public init(_ setting: String, address: String) {
        self.init(setting, BusAddress.endpoints(address))
    }
}

/// Secure by default: a process refuses to bind or connect a bus endpoint that other machines can
/// reach while its bus is plain TCP, where anyone on that network could hear every event and call
/// every op. Local endpoints need nothing; others need CURVE (`--curve-keys`) or, for a network
/// that is private on purpose, `--insecure-bus`.
public enum BusExposure {
    public static let insecureFlag = "insecure-bus"
    public static let insecureEnvironment = "RIDE_INSECURE_BUS"

    /// Whether `endpoint` stays on this machine: `ipc://` and `inproc://`, or TCP on a loopback
    /// address (127.0.0.0/8, ::1, localhost). `tcp://*:…`, an interface name and every other host
    /// are not: they may be reached from elsewhere.
    public static func isLocal(_ endpoint: String) -> Bool {
        if endpoint.hasPrefix("ipc://") || endpoint.hasPrefix("inproc://") { return true }
        guard endpoint.hasPrefix("tcp://"), let colon = endpoint.lastIndex(of: ":") else { return false }
        var host = endpoint[endpoint.index(endpoint.startIndex, offsetBy: 6)..<colon]
        // `tcp://SOURCE;HOST:PORT` connects from SOURCE to HOST.
        if let semicolon = host.lastIndex(of: ";") { host = host[host.index(after: semicolon)...] }
        if host.hasPrefix("["), host.hasSuffix("]") { host = host.dropFirst().dropLast() }
        if host == "localhost" || host == "::1" { return true }
        let octets = host.split(separator: ".", omittingEmptySubsequences: false).map { UInt8($0) }
        return octets.count == 4 && octets.allSatisfy { $0 != nil } && octets[0] == 127
    }

    /// The settings' endpoints that other machines may reach.
    public static func exposed(_ settings: [BusEndpointSetting]) -> [(setting: String, endpoint: String)] {
        settings.flatMap { setting in setting.endpoints.filter { !isLocal($0) }.map { (setting.setting, $0) } }
    }

    /// Throws a `ConfigurationError` that says why and what to do when `settings` name an
    /// endpoint other machines reach, CURVE is off, and `insecure` is not set.
    public static func check(_ settings: [BusEndpointSetting], curve: Bool, insecure: Bool) throws {
        guard !curve, !insecure, let first = exposed(settings).first else { return }
        throw ConfigurationError(
            """
            the \(first.setting) \(first.endpoint) can be reached from other machines, and the bus is not secured: \
            anyone there could read every event and call every op. Secure it with CURVE — --curve-keys DIR \
            (\(CurveOptions.directoryEnvironment)), keys made by `ridectl keys init DIR`, docs/operations.md#securing-the-bus-curve — \
            or use a local address (127.0.0.1, ipc://), or say --\(insecureFlag) (\(insecureEnvironment)=1) if the network is private on purpose
            """)
    }

    /// What `--check` prints as the bus's security (once `check` has passed).
    static func summary(_ settings: [BusEndpointSetting], curve: CurveSecurity?) -> String {
        if let curve { return "CURVE, own public key \(curve.identity.publicKey)" }
        if exposed(settings).isEmpty { return "none: plain TCP on local addresses only (--curve-keys turns CURVE on)" }
        return "NONE: plain TCP reachable from other machines, on purpose (--\(insecureFlag))"
    }
}
