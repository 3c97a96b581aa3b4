import ArgumentParser
import Bus
import Cities
import Foundation
import Logging
import RideContract
import RideModels
import RoadServers
import ServiceKit
import ServiceStorage
import SettingsKit
import Storage

/// `ride-orders`' flags. Each has an environment variable; a flag wins over its variable.
public struct RideOrdersCommand: ServiceCommand {
    /// What `--data-dir` holds.
    public enum Files: DataFiles {
        public static let description = "orders.sqlite and ledger.sqlite (unless --database-url)"
    }

    public static let configuration = CommandConfiguration(
        commandName: "ride-orders",
        abstract: "Orders: booking, dispatch to the nearest drivers, and the ride's lifecycle.",
        discussion: """
            \(RideContract.helpSummary(of: BusContract.Service.orders)) Events come from a transactional \
            outbox. Every op of the apps names its caller ({"caller":{"role","id"}}); a \
            rider may touch only their own orders, a driver only orders offered to or accepted by \
            them. \
            --http defaults to \(RideProcess.orders.httpDefault).

            \(ExitCodes.help(opening: "the database"))
            """,
        version: PlatformVersion.current
    )

    public static let busRole: HeldRole? = Roles.orders.held

    @OptionGroup var bus: BusClientOptions

    @OptionGroup var dataDirectory: DataDirectoryOptions<Files>

    @OptionGroup var database: DatabaseOptions

    @Option(
        name: .customLong("dispatch-radius-m"),
        help: helpWithEnv(
            "How far from the pickup drivers are offered a new order, in metres", env: "RIDE_DISPATCH_RADIUS_M", default: "3000"))
    var dispatchRadius: Int?

    @Option(
        name: .customLong("dispatch-drivers"),
        help: helpWithEnv("How many of the nearest available drivers a new order is offered to", env: "RIDE_DISPATCH_DRIVERS", default: "3")
    )
    var dispatchDrivers: Int?

    @Option(
        name: .customLong("offer-timeout-s"),
        help: helpWithEnv(
            "Seconds an offer waits for an accept before the order is offered farther", env: "RIDE_OFFER_TIMEOUT_S", default: "15"))
    var offerTimeout: Int?

    @Option(
        name: .customLong("driver-search-s"),
        help: helpWithEnv(
            "Seconds a new order waits for a driver to accept it before it ends CANCELLED, reason no_driver_found",
            env: "RIDE_DRIVER_SEARCH_S", default: "180"))
    var driverSearch: Int?

    @Option(
        name: .customLong("fare"),
        help: helpWithEnv(
            "Fare schedule: currency,base,per_km,per_minute,minimum (amounts in cents)", env: "RIDE_FARE", default: "USD,250,120,30,500"))
    var fare: String?

    @Option(
        name: .customLong("cancellation-fee"),
        help: helpWithEnv(
            "What a rider pays, in cents of the fare's currency, for cancelling after the driver reached the pickup (the driver earns their share); 0 is no fee",
            env: "RIDE_CANCELLATION_FEE", default: "0"))
    var cancellationFee: Int?

    @Option(
        name: .customLong("no-show-wait-s"),
        help: helpWithEnv(
            "Seconds a driver waits at the pickup before they may end the ride as a no-show (the rider pays the cancellation fee)",
            env: "RIDE_NO_SHOW_WAIT_S",
            default: "\(OffScriptRules.defaultNoShowWait)"))
    var noShowWait: Int?

    @Option(
        name: .customLong("arrival-radius-m"),
        help: helpWithEnv(
            "Metres from the pickup or drop-off within which a driver may report arriving where the geofence has not fired",
            env: "RIDE_ARRIVAL_RADIUS_M",
            default: "\(OffScriptRules.defaultArrivalRadius)"))
    var arrivalRadius: Int?

    @Option(
        name: .customLong("surge"),
        help: helpWithEnv(
            "Surge pricing: maximum,radius_m,step — fares rise by step per waiting order per available driver near the pickup, up to maximum; maximum 1 is off",
            env: "RIDE_SURGE",
            default: "1,2000,0.25"))
    var surge: String?

    @Option(
        name: .customLong("commission-percent"),
        help: helpWithEnv("The platform's share of each fare; the driver earns the rest", env: "RIDE_COMMISSION_PERCENT", default: "20"))
    var commissionPercent: Int?

    @Option(
        name: .customLong("share-lifetime-s"),
        help: helpWithEnv(
            "Seconds a ride's share link keeps working after the ride ended (then 410 share_expired)", env: "RIDE_SHARE_LIFETIME_S",
            default: "\(Int(ShareRules.lifetimeAfterRide))"))
    var shareLifetime: Int?

    @OptionGroup var workers: WorkerOptions

    @OptionGroup var routing: RoutingOptions

    @OptionGroup var city: CityOptions

    @OptionGroup var payments: PaymentOptions

    @OptionGroup public var common: CommonOptions

    public init() {}

    public static func serve(_ settings: OrdersSettings) async throws {
        try await OrdersServer(settings: settings).run()
    }

    public func settings() throws -> OrdersSettings {
        let logging = try common.logging()
        var dispatch = DispatchSettings()
        dispatch.radius = Double(
            try integerSetting(
                dispatchRadius, flag: "dispatch-radius-m", env: "RIDE_DISPATCH_RADIUS_M", default: 3000, range: 100...100_000))
        dispatch.drivers = try integerSetting(
            dispatchDrivers, flag: "dispatch-drivers", env: "RIDE_DISPATCH_DRIVERS", default: 3, range: 1...50)
        dispatch.offerTimeout = Double(
            try integerSetting(offerTimeout, flag: "offer-timeout-s", env: "RIDE_OFFER_TIMEOUT_S", default: 15, range: 1...3600))
        dispatch.searchTimeout = Double(
            try integerSetting(driverSearch, flag: "driver-search-s", env: "RIDE_DRIVER_SEARCH_S", default: 180, range: 1...86_400))
        let fareSetting = Setting.resolve(fare, flag: "fare", env: "RIDE_FARE", default: "USD,250,120,30,500")
        let parts = fareSetting.value.split(separator: ",", omittingEmptySubsequences: false).map {
            $0.trimmingCharacters(in: .whitespaces)
        }
        guard parts.count == 5, let base = Int(parts[1]), let perKm = Int(parts[2]), let perMinute = Int(parts[3]),
            let minimum = Int(parts[4])
        else {
            throw ConfigurationError(
                "fare (\(fareSetting.origin)) '\(fareSetting.value)' must be currency,base,per_km,per_minute,minimum (e.g. USD,250,120,30,500)"
            )
        }
        let fee = try integerSetting(
            cancellationFee, flag: "cancellation-fee", env: "RIDE_CANCELLATION_FEE", default: 0, range: 0...100_000)
        let fares = FareSchedule(
            currency: parts[0], baseCents: base, perKilometreCents: perKm, perMinuteCents: perMinute, minimumCents: minimum,
            cancellationFeeCents: fee)
        if let problem = fares.problem { throw ConfigurationError("fare (\(fareSetting.origin)): \(problem)") }
        let surgeSetting = Setting.resolve(surge, flag: "surge", env: "RIDE_SURGE", default: "1,2000,0.25")
        let surgeParts = surgeSetting.value.split(separator: ",", omittingEmptySubsequences: false).map {
            Double($0.trimmingCharacters(in: .whitespaces))
        }
        guard surgeParts.count == 3, let maximum = surgeParts[0], let radius = surgeParts[1], let step = surgeParts[2] else {
            throw ConfigurationError(
                "surge (\(surgeSetting.origin)) '\(surgeSetting.value)' must be maximum,radius_m,step (e.g. 2.5,2000,0.25; maximum 1 is off)"
            )
        }
        let surgePolicy = SurgePolicy(maximum: maximum, radius: radius, step: step)
        if let problem = surgePolicy.problem { throw ConfigurationError("surge (\(surgeSetting.origin)): \(problem)") }
        let commission = try integerSetting(
            commissionPercent, flag: "commission-percent", env: "RIDE_COMMISSION_PERCENT", default: 20, range: 0...100)
        let dataDirectory = dataDirectory.resolved()
        return OrdersSettings(
            pub: try bus.publishEndpoint(), sub: try bus.subscribeEndpoint(), broker: try bus.brokerEndpoint(),
            dataDirectory: dataDirectory,
            database: try database.location(sqlitePath: URL(fileURLWithPath: dataDirectory).appendingPathComponent("orders.sqlite").path),
            dispatch: dispatch, fares: fares, surge: surgePolicy, commissionPercent: commission, payments: try payments.settings(),
            routes: try routing.source(),
            city: try city.setting(),
            shareLifetime: TimeInterval(
                try integerSetting(
                    shareLifetime, flag: "share-lifetime-s", env: "RIDE_SHARE_LIFETIME_S", default: Int(ShareRules.lifetimeAfterRide),
                    range: 0...2_592_000)),
            offScript: OffScriptRules(
                noShowWait: TimeInterval(
                    try integerSetting(
                        noShowWait, flag: "no-show-wait-s", env: "RIDE_NO_SHOW_WAIT_S", default: OffScriptRules.defaultNoShowWait,
                        range: 0...3600)),
                arrivalRadius: Double(
                    try integerSetting(
                        arrivalRadius, flag: "arrival-radius-m", env: "RIDE_ARRIVAL_RADIUS_M", default: OffScriptRules.defaultArrivalRadius,
                        range: 20...5000))),
            concurrency: try workers.resolved(),
            http: try common.httpAddress(default: RideProcess.orders.httpDefault), logFormat: logging.format, logLevel: logging.level)
    }
}

/// `ride-orders`' resolved configuration.
public struct OrdersSettings: BusClientSettings {
    public var pub: String
    public var sub: String
    public var broker: String
    public var dataDirectory: String
    public var database: StorageLocation
    public var secrets: [SecretSetting] { database.secrets }
    public var dispatch: DispatchSettings
    public var fares: FareSchedule
    public var surge: SurgePolicy
    public var commissionPercent: Int
    public var payments: PaymentSettings
    /// Where quotes' routes come from.
    public var routes: RouteSource
    /// The city whose roads `--routes embedded` quotes on.
    public var city: CitySetting
    /// How long a ride's share link works after the ride.
    public var shareLifetime: TimeInterval
    public var offScript: OffScriptRules
    public var concurrency: Int
    public var http: HostPort
    public var logFormat: LogFormat
    public var logLevel: Logger.Level

    /// The default payment provider's ledger (a stand-in for a card processor) when orders keep SQLite; in PostgreSQL, schema `ledger`.
    public var ledgerPath: String { URL(fileURLWithPath: dataDirectory).appendingPathComponent("ledger.sqlite").path }

    var ledgerDescription: String {
        if case .postgres(let url) = database { return "PostgreSQL \(url), schema ledger" }
        return ledgerPath
    }

    var paymentsDescription: String {
        if case .stripe(let stripe) = payments { return stripe.summary }
        return "ledger \(ledgerDescription)"
    }

    /// Stripe's ids of riders and drivers, beside the orders' data.
    public var stripeIDsPath: String { URL(fileURLWithPath: dataDirectory).appendingPathComponent("stripe.sqlite").path }

    public var summary: String {
        """
        ride-orders configuration OK
          bus                   pub \(pub), sub \(sub), broker \(broker)
          database              \(database)
          share links           work until \(Int(shareLifetime)) s after the ride
          off-script            no-show after \(Int(offScript.noShowWait)) s at the pickup; arrival reported within \(Int(offScript.arrivalRadius)) m
          dispatch              \(dispatch.drivers) nearest available drivers within \(Int(dispatch.radius)) m, widening after \(Int(dispatch.offerTimeout)) s, no driver found after \(Int(dispatch.searchTimeout)) s
          fare                  \(fares.currency) base \(fares.baseCents), per km \(fares.perKilometreCents), per minute \(fares.perMinuteCents), minimum \(fares.minimumCents), cancellation fee \(fares.cancellationFeeCents) (cents)
          surge                 \(surge.isOn ? "up to ×\(surge.maximum) within \(Int(surge.radius)) m, +\(surge.step) per waiting order per driver" : "off")
          payments              \(paymentsDescription), commission \(commissionPercent)%
          routes                \(routes) in \(city)
          concurrency           \(concurrency)
          health/metrics        http://\(http)/health
          logs                  \(logFormat.rawValue), \(logLevel.rawValue)
        """
    }
}
