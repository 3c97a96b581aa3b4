import ArgumentParser
import Bus
import Foundation
import RideContract
import RideModels
import ServiceKit
import ServiceStorage
import SettingsKit
import Storage

/// `ride-tracking`'s flags. Each has an environment variable; a flag wins over its variable.
public struct RideTrackingCommand: ServiceCommand {
    /// What `--data-dir` holds.
    public enum Files: DataFiles {
        public static let description = "tracking.sqlite (tracking-shard-K-of-N.sqlite when sharded; unless --database-url)"
    }

    public static let configuration = CommandConfiguration(
        commandName: "ride-tracking",
        abstract: "Tracking: location ingest from driver devices, latest positions, Nearby search, device status, history.",
        discussion: """
            Devices (the TrackingSDK) connect to the ingest socket with a DEALER (a random routing id) \
            and send batches of locations naming their device; each batch is acknowledged once stored. \
            \(RideContract.helpSummary(of: BusContract.Service.tracking)) Each device's events are \
            sequenced on their own (source tracking/devices/<id>). --http defaults to \(RideProcess.tracking.httpDefault).

            Sharding (--shard K/N): N processes split the devices by a stable hash of the device id \
            (see DeviceShards); each keeps only its own devices, in memory and in its own SQLite file \
            (tracking-shard-K-of-N.sqlite), and binds its own ingest endpoint. Every shard answers the \
            public service "tracking" — a device op for another shard's device is passed on to that \
            shard, and nearby asks every shard and merges their answers, nearest first — and its own \
            service "tracking.shard.K". SDKs are given the ingest endpoints of all shards, in shard \
            order (RIDE_TRACKING_INGEST=tcp://a:5558,tcp://b:5558). Keep N fixed for a data directory: \
            another N moves devices to other shards, whose files do not have their history.

            \(ExitCodes.help(opening: "the database"))

            With --database-url (RIDE_DATABASE_URL) devices and history are kept in PostgreSQL \
            instead (schema "tracking"), shared by every shard: each shard loads the devices it owns, \
            and while a shard does not answer the others (3 s) they serve its devices, read from the \
            store, until it is back (docs/operations.md, Tracking shards).
            """,
        version: PlatformVersion.current
    )

    public static let busRole: HeldRole? = Roles.tracking.held

    @OptionGroup var bus: BusClientOptions

    /// Where the device ingest binds unless told: this machine only, as the bus does
    /// (`BusContract`); phones elsewhere need `--ingest tcp://*:5558` with CURVE.
    public static let defaultIngest = "tcp://127.0.0.1:\(PlatformPorts.trackingIngest)"
    typealias Keys = TrackingSettingKeys

    @Option(name: Keys.ingest.name, help: Keys.ingest.help) var ingest: String?
    @Option(name: Keys.shard.name, help: Keys.shard.help) var shard: String?

    @OptionGroup var dataDirectory: DataDirectoryOptions<Files>

    @OptionGroup var database: DatabaseOptions

    @Option(name: Keys.publishableKeys.name, help: Keys.publishableKeys.help) var publishableKeys: String?
    @Option(name: Keys.deviceOwners.name, help: Keys.deviceOwners.help) var deviceOwners: String?
    @Option(name: Keys.deviceCredentials.name, help: Keys.deviceCredentials.help) var deviceCredentials: String?
    @Option(name: Keys.deviceCredentialRecheckSeconds.name, help: Keys.deviceCredentialRecheckSeconds.help)
    var deviceCredentialRecheckSeconds: Int?
    @Option(name: Keys.inactiveAfterSeconds.name, help: Keys.inactiveAfterSeconds.help) var inactiveAfterSeconds: Int?
    @Option(name: Keys.futureToleranceSeconds.name, help: Keys.futureToleranceSeconds.help) var futureToleranceSeconds: Int?

    @OptionGroup var workers: WorkerOptions

    @OptionGroup public var common: CommonOptions

    /// It binds the device ingest (and connects to the bus as `tracking`).
    public static let servesBusEndpoints = true

    public init() {}

    public static func serve(_ settings: TrackingSettings) async throws {
        try await TrackingServer(settings: settings).run()
    }

    public func settings() throws -> TrackingSettings {
        var rules = LocationRules()
        rules.futureTolerance = TimeInterval(try Keys.futureToleranceSeconds.value(futureToleranceSeconds))
        let keys = Keys.publishableKeys.resolve(publishableKeys)
        let keyList = keys.value.split(separator: ",", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
        guard !keyList.isEmpty, !keyList.contains(where: \.isEmpty) else {
            throw ConfigurationError("publishable keys (\(keys.origin)) must be one or more keys separated by commas")
        }
        let shardSetting = Keys.shard.resolve(shard)
        let deviceShard: DeviceShard
        do {
            deviceShard = try DeviceShard.parse(shardSetting.value)
        } catch {
            throw ConfigurationError("shard (\(shardSetting.origin)) \(error.description)")
        }
        let owners = Keys.deviceOwners.resolve(deviceOwners)
        guard ["users", "open"].contains(owners.value) else {
            throw ConfigurationError("device owners (\(owners.origin)) '\(owners.value)' must be users or open")
        }
        let credentials = Keys.deviceCredentials.resolve(deviceCredentials)
        guard ["required", "off"].contains(credentials.value) else {
            throw ConfigurationError("device credentials (\(credentials.origin)) '\(credentials.value)' must be required or off")
        }
        let directory = dataDirectory.resolved()
        return TrackingSettings(
            basics: try ServiceBasics(.tracking, bus: bus, common: common),
            ingest: try EndpointSyntax.validateList(
                Keys.ingest.resolve(ingest),
                name: "device ingest", forBinding: true),
            shard: deviceShard,
            dataDirectory: directory,
            database: try database.location(sqlitePath: TrackingSettings.sqlitePath(directory: directory, shard: deviceShard)),
            publishableKeys: Set(keyList),
            verifiesDeviceOwners: owners.value == "users",
            requiresDeviceCredentials: credentials.value == "required",
            deviceCredentialRecheck: TimeInterval(try Keys.deviceCredentialRecheckSeconds.value(deviceCredentialRecheckSeconds)),
            inactiveAfter: TimeInterval(try Keys.inactiveAfterSeconds.value(inactiveAfterSeconds)),
            rules: rules,
            concurrency: try workers.resolved())
    }
}

/// `ride-tracking`'s resolved configuration.
public struct TrackingSettings: BusClientSettings {
    public var basics: ServiceBasics
    public var ingest: [String]
    /// Which devices this process keeps (`0/1`: all of them).
    public var shard: DeviceShard
    public var dataDirectory: String
    /// The shard's SQLite file, or the shared PostgreSQL database.
    public var database: StorageLocation
    public var secrets: [SecretSetting] { database.secrets }
    public var publishableKeys: Set<String>
    /// Whether a new `metadata.user_id` is checked with users (`DeviceOwnership`).
    public var verifiesDeviceOwners: Bool
    /// Whether a batch on the ingest socket must carry its device's credential (`DeviceCredentialCheck`).
    public var requiresDeviceCredentials: Bool
    /// How long a credential users accepted is believed before it is checked again.
    public var deviceCredentialRecheck: TimeInterval
    public var inactiveAfter: TimeInterval
    public var rules: LocationRules
    public var concurrency: Int

    /// The bus's addresses and the device ingest it binds (phones connect there).
    public var busEndpoints: [BusEndpointSetting] {
        busClientEndpoints + [BusEndpointSetting("device ingest (\(TrackingSettingKeys.ingest.flagAndVariable))", ingest)]
    }

    /// Whether shards hand devices over while one is down: sharded on PostgreSQL, where every
    /// shard reads what the others stored. On SQLite each shard's history is in its own file, which
    /// no other shard can read, so a shard's devices wait for it (503 `shard_unavailable`).
    public var handsOver: Bool {
        guard shard.isSharded, case .postgres = database else { return false }
        return true
    }

    /// Unsharded, today's `tracking.sqlite`. Sharded, a file per shard and shard count, so a shard
    /// never opens another's history and a changed N starts afresh instead of mixing devices.
    static func sqlitePath(directory: String, shard: DeviceShard) -> String {
        let file = shard.isSharded ? "tracking-shard-\(shard.index)-of-\(shard.shards.count).sqlite" : "tracking.sqlite"
        return URL(fileURLWithPath: directory).appendingPathComponent(file).path
    }

    public var summary: String {
        let sharding =
            shard.isSharded
            ? " (MDP services tracking and tracking.shard.\(shard.index)), "
                + (handsOver ? "hands devices over while a shard is down" : "no handover (SQLite: a file per shard)")
            : " (unsharded)"
        return basics.summary(
            of: .tracking,
            [
                "shard": "\(shard)" + sharding,
                "device ingest": ingest.joined(separator: ", "),
                "database": "\(database)",
                "publishable keys": "\(publishableKeys.count)",
                "device owners": verifiesDeviceOwners ? "checked with users" : "open (metadata believed)",
                "device credentials":
                    requiresDeviceCredentials
                    ? "required on the ingest socket, checked with users every \(Int(deviceCredentialRecheck)) s"
                    : "off (the publishable key is enough)",
                "inactive after": "\(Int(inactiveAfter)) s of silence",
                "future tolerance": "\(Int(rules.futureTolerance)) s",
                "concurrency": "\(concurrency)",
            ])
    }
}
