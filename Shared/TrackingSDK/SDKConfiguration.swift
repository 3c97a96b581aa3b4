import Foundation
import RideModels
import ZeroMQ

/// How the SDK is configured: the spec's Info.plist keys, read from the environment or from the
/// JSON file named by `HYPERTRACK_CONFIG` (the environment wins), plus this platform's own keys.
///
/// | key | meaning | default |
/// |---|---|---|
/// | `HyperTrackPublishableKey` | the platform's publishable key (required) | — |
/// | `HyperTrackAllowMockLocations` | accept simulated locations (routes, GPX replays) | false |
/// | `HyperTrackLoggingEnabled` | debug logs on standard error | false |
/// | `HyperTrackAutomaticallyRequestPermissions` | accepted for compatibility (Linux asks no permissions) | true |
/// | `HyperTrackDeviceID` | the device id (else one is made once and kept under ~/.config) | — |
/// | `HyperTrackDeviceCredential` | the device credential from the driver's session (`device_credential`); the platform refuses the device's locations without it | — |
/// | `RIDE_TRACKING_INGEST` / `RideTrackingEndpoint` | where ride-tracking's ingest socket is; with tracking in N shards, the N shards' endpoints comma-separated in shard order (`tcp://a:5558,tcp://b:5558`): a device sends to the one of its shard (`DeviceShards`) | tcp://127.0.0.1:5558 |
/// | `HyperTrackLocationGPX` | replay this GPX file as the location source | — |
/// | `RIDE_TRACKING_INGEST_SERVER_KEY` / `RideTrackingServerKey` | the ingest's CURVE public key (Z85), when it speaks CURVE: a process without CURVE keys of its own then connects with a key pair made for the run | — |
public struct SDKConfiguration: Sendable {
    public var publishableKey: String?
    public var allowMockLocations = false
    public var loggingEnabled = false
    public var automaticallyRequestPermissions = true
    public var deviceID: String?
    /// The device credential from the driver's session (this platform's; see `TrackingDevice.deviceCredential`).
    public var deviceCredential: String?
    /// ride-tracking's ingest endpoints: one per shard, in shard order (one, unsharded).
    public var endpoints = ["tcp://127.0.0.1:5558"]
    public var gpxPath: String?
    /// The ingest's CURVE server key (Z85), when it speaks CURVE and the process has no CURVE keys
    /// (the runtime's context has none): the runtime makes a key pair for the run. The ingest
    /// admits any key; the device credential says who the phone is.
    public var ingestServerKey: String?
    /// How often a location is taken while tracking or available.
    public var samplingInterval: Duration = .seconds(1)
    /// How often a batch is sent (sooner when `maximumBatch` locations wait).
    public var batchInterval: Duration = .seconds(1)
    public var maximumBatch = 100
    /// Locations kept while the platform is away; the oldest are dropped (and counted) beyond this.
    public var maximumUnsent = 10_000
    /// How long to wait for an acknowledgement before sending a batch again (then backing off).
    public var acknowledgementTimeout: Duration = .seconds(3)
    /// The longest wait before a batch is sent again: the backoff doubles up to this.
    public var maximumRetryDelay: Duration = .seconds(30)

    /// The longest a device can take to hear the platform (an acknowledgement, the intents it
    /// carries) while the platform answers at all: the batch in flight waits out its longest
    /// backoff, then the next batch is sent and may wait as long.
    public var longestRoundTrip: Duration { maximumRetryDelay * 2 + batchInterval }

    public init(publishableKey: String? = nil) { self.publishableKey = publishableKey }

    /// A setting that cannot be used: the SDK stops the program with this message, as the spec asks
    /// for integration mistakes.
    public struct Problem: Error, CustomStringConvertible {
        public let description: String
    }

    public static let missingKeyMessage = """
        Please set the publishable key of your ridesharing platform as `HyperTrackPublishableKey` — in \
        the environment (HyperTrackPublishableKey=...) or in the JSON file named by HYPERTRACK_CONFIG. \
        The platform's keys are ride-tracking's RIDE_PUBLISHABLE_KEYS (pk_dev_ridesharing on a dev box).
        """

    /// Reads the environment and the `HYPERTRACK_CONFIG` file.
    public static func load(environment: [String: String] = ProcessInfo.processInfo.environment) throws -> SDKConfiguration {
        var values: [String: String] = [:]
        if let path = environment["HYPERTRACK_CONFIG"], !path.isEmpty {
            guard let data = FileManager.default.contents(atPath: path) else {
                throw Problem(description: "HYPERTRACK_CONFIG names \(path), which cannot be read")
            }
            guard let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else {
                throw Problem(description: "HYPERTRACK_CONFIG file \(path) must hold a JSON object of settings")
            }
            for (key, value) in object { values[key] = "\(value)" }
        }
        for (key, value) in environment where key.hasPrefix("HyperTrack") || key.hasPrefix("RIDE_TRACKING_INGEST") { values[key] = value }

        var configuration = SDKConfiguration()
        configuration.publishableKey = values["HyperTrackPublishableKey"].flatMap { $0.isEmpty ? nil : $0 }
        configuration.allowMockLocations = try flag(values, "HyperTrackAllowMockLocations", default: false)
        configuration.loggingEnabled = try flag(values, "HyperTrackLoggingEnabled", default: false)
        configuration.automaticallyRequestPermissions = try flag(values, "HyperTrackAutomaticallyRequestPermissions", default: true)
        configuration.deviceID = values["HyperTrackDeviceID"].flatMap { $0.isEmpty ? nil : $0 }
        configuration.deviceCredential = values["HyperTrackDeviceCredential"].flatMap { $0.isEmpty ? nil : $0 }
        if let endpoints = values["RIDE_TRACKING_INGEST"] ?? values["RideTrackingEndpoint"], !endpoints.isEmpty {
            configuration.endpoints = try parseEndpoints(endpoints)
        }
        configuration.gpxPath = values["HyperTrackLocationGPX"].flatMap { $0.isEmpty ? nil : $0 }
        if let key = values["RIDE_TRACKING_INGEST_SERVER_KEY"] ?? values["RideTrackingServerKey"], !key.isEmpty {
            do {
                try Z85.validateKey(key)
            } catch {
                throw Problem(description: "RIDE_TRACKING_INGEST_SERVER_KEY must be the ingest's CURVE public key: \(error)")
            }
            configuration.ingestServerKey = key
        }
        return configuration
    }

    /// The ingest endpoint of `deviceID`'s home shard.
    public func endpoint(for deviceID: String) throws -> String {
        try endpoints[shardRanking(for: deviceID)[0]]
    }

    /// The shards `deviceID` tries, in order (`DeviceShards.ranking(of:)`): its home shard, then
    /// the one that serves it while its home is down, and so on.
    public func shardRanking(for deviceID: String) throws -> [Int] {
        if let problem = Self.problem(withEndpointCount: endpoints.count) { throw Problem(description: problem) }
        return DeviceShards(count: endpoints.count).ranking(of: deviceID)
    }

    /// Parses `RIDE_TRACKING_INGEST`: endpoints separated by commas, one per tracking shard.
    public static func parseEndpoints(_ text: String) throws -> [String] {
        let endpoints = text.split(separator: ",", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
        guard !endpoints.contains(where: \.isEmpty) else {
            throw Problem(
                description:
                    "RIDE_TRACKING_INGEST '\(text)' must be ride-tracking's ingest endpoints separated by commas, one per shard in shard order; one is empty"
            )
        }
        if let problem = problem(withEndpointCount: endpoints.count) {
            throw Problem(description: "RIDE_TRACKING_INGEST '\(text)': \(problem)")
        }
        return endpoints
    }

    static func problem(withEndpointCount count: Int) -> String? {
        (1...DeviceShards.maximumCount).contains(count)
            ? nil : "tracking has from 1 to \(DeviceShards.maximumCount) shards, one ingest endpoint each; got \(count) endpoints"
    }

    static func flag(_ values: [String: String], _ key: String, default defaultValue: Bool) throws -> Bool {
        guard let text = values[key] else { return defaultValue }
        switch text.lowercased() {
        case "true", "yes", "1": return true
        case "false", "no", "0": return false
        default: throw Problem(description: "\(key) must be true or false, got \"\(text)\"")
        }
    }

    /// This machine's device id: kept in ~/.config/ridesharing-sdk/device-id (made once), so a
    /// device keeps its id across runs, as a phone does.
    static func persistentDeviceID() -> String {
        let directory = FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".config/ridesharing-sdk")
        let file = directory.appendingPathComponent("device-id")
        if let stored = try? String(contentsOf: file, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines), !stored.isEmpty {
            return stored
        }
        let id = UUID().uuidString
        try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try? id.write(to: file, atomically: true, encoding: .utf8)
        return id
    }
}
