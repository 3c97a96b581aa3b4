import ArgumentParser
import Bus
import Cities
import Foundation
import RideContract
import RoadServers
import ServiceKit
import ServiceStorage
import SettingsKit
import Storage

/// `ride-trips`' flags. Each has an environment variable; a flag wins over its variable.
public struct RideTripsCommand: ServiceCommand {
    /// What `--data-dir` holds.
    public enum Files: DataFiles {
        public static let description = "trips.sqlite (unless --database-url)"
    }

    public static let configuration = CommandConfiguration(
        commandName: "ride-trips",
        abstract: "Trips: a device's way to a destination — estimates, arrival, completion with a summary, share ids.",
        discussion: """
            HyperTrack's Trips API v3 over the bus. \(RideContract.helpSummary(of: BusContract.Service.trips)) \
            A create's idempotency_key makes a repeat return the first trip; trip.eta comes at most once per \
            trip every 5 s, trip.destination_arrival once; events come from a transactional outbox. Watches \
            device.location.<id> only for devices with an active trip. --http defaults to \(RideProcess.trips.httpDefault).

            \(ExitCodes.help(opening: "the database"))
            """,
        version: PlatformVersion.current
    )

    public static let busRole: HeldRole? = Roles.trips.held
    typealias Keys = TripsSettingKeys

    @OptionGroup var bus: BusClientOptions

    @OptionGroup var dataDirectory: DataDirectoryOptions<Files>

    @OptionGroup var database: DatabaseOptions

    @OptionGroup var workers: WorkerOptions

    @Option(name: Keys.offRoute.name, help: Keys.offRoute.help) var offRoute: String?
    @Option(name: Keys.delayAfter.name, help: Keys.delayAfter.help) var delayAfter: String?

    @OptionGroup var routing: RoutingOptions

    @OptionGroup var city: CityOptions

    @OptionGroup public var common: CommonOptions

    public init() {}

    public static func serve(_ settings: TripsSettings) async throws {
        try await TripsServer(settings: settings).run()
    }

    public func settings() throws -> TripsSettings { try settings(environment: ProcessInfo.processInfo.environment) }

    func settings(environment: [String: String]) throws -> TripsSettings {
        let dataDirectory = dataDirectory.resolved()
        return TripsSettings(
            basics: try ServiceBasics(.trips, bus: bus, common: common),
            dataDirectory: dataDirectory,
            database: try database.location(
                sqlitePath: URL(fileURLWithPath: dataDirectory).appendingPathComponent("trips.sqlite").path, environment: environment),
            concurrency: try workers.resolved(),
            routes: try routing.source(environment: environment), city: try city.setting(environment: environment),
            follow: try Self.followRules(offRoute: offRoute, delayAfter: delayAfter, environment: environment))
    }
}

extension RideTripsCommand {
    /// `--off-route-m` and `--delay-after`, checked (a bad value names its flag or variable).
    static func followRules(offRoute: String?, delayAfter: String?, environment: [String: String]) throws -> FollowRules {
        var rules = FollowRules()
        let off = Keys.offRoute.resolve(offRoute, environment: environment)
        guard let metres = Double(off.value), metres.isFinite, (5...5000).contains(metres) else {
            throw ConfigurationError("off-route-m (\(off.origin)) '\(off.value.prefix(40))' must be metres from 5 to 5000")
        }
        rules.offRouteMetres = metres
        let delay = Keys.delayAfter.resolve(delayAfter, environment: environment)
        let parts = delay.value.split(separator: ",", omittingEmptySubsequences: false).map {
            Double($0.trimmingCharacters(in: .whitespaces))
        }
        guard parts.count == 2, let seconds = parts[0], let percent = parts[1], (1...86_400).contains(seconds), (0...1000).contains(percent)
        else {
            throw ConfigurationError(
                "delay-after (\(delay.origin)) '\(delay.value.prefix(40))' must be SECONDS,PERCENT (1 to 86400, 0 to 1000), e.g. 180,30")
        }
        (rules.delaySeconds, rules.delayFraction) = (seconds, percent / 100)
        return rules
    }
}

/// `ride-trips`' own settings, each declared once: the flags and the values come from here.
enum TripsSettingKeys {
    static let offRoute = SettingKey(
        "off-route-m", env: "RIDE_OFF_ROUTE_M", default: "50",
        "Metres from its route (beyond the fix's accuracy) that put a device off it; 3 fixes off re-route the trip")
    static let delayAfter = SettingKey(
        "delay-after", env: "RIDE_DELAY_AFTER", default: "180,30",
        "SECONDS,PERCENT: a trip is late (trip.delayed, the rider told) when its estimate slips past the first by more than both")
}

/// `ride-trips`' resolved configuration.
public struct TripsSettings: StoredServiceSettings {
    public var basics: ServiceBasics
    public var dataDirectory: String
    public var database: StorageLocation
    public var secrets: [SecretSetting] { database.secrets }
    public var concurrency: Int
    /// Where trips' routes come from.
    public var routes: RouteSource
    /// The city whose roads `--routes embedded` routes on.
    public var city: CitySetting
    public var follow: FollowRules

    public var summary: String {
        basics.summary(
            of: .trips,
            [
                "database": "\(database)",
                "concurrency": "\(concurrency)",
                "routes":
                    "\(routes) in \(city); off route beyond \(Int(follow.offRouteMetres)) m; "
                    + "late past \(Int(follow.delaySeconds)) s and \(Int(follow.delayFraction * 100))%",
            ])
    }
}
