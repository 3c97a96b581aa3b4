import ArgumentParser
import Bus
import Cities
import Foundation
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
    typealias Keys = OrdersSettingKeys

    @OptionGroup var bus: BusClientOptions

    @OptionGroup var dataDirectory: DataDirectoryOptions<Files>

    @OptionGroup var database: DatabaseOptions

    @Option(name: Keys.dispatchRadius.name, help: Keys.dispatchRadius.help) var dispatchRadius: Int?
    @Option(name: Keys.dispatchDrivers.name, help: Keys.dispatchDrivers.help) var dispatchDrivers: Int?
    @Option(name: Keys.offerTimeout.name, help: Keys.offerTimeout.help) var offerTimeout: Int?
    @Option(name: Keys.driverSearch.name, help: Keys.driverSearch.help) var driverSearch: Int?
    @Option(name: Keys.fare.name, help: Keys.fare.help) var fare: String?
    @Option(name: Keys.cancellationFee.name, help: Keys.cancellationFee.help) var cancellationFee: Int?
    @Option(name: Keys.noShowWait.name, help: Keys.noShowWait.help) var noShowWait: Int?
    @Option(name: Keys.arrivalRadius.name, help: Keys.arrivalRadius.help) var arrivalRadius: Int?
    @Option(name: Keys.surge.name, help: Keys.surge.help) var surge: String?
    @Option(name: Keys.commissionPercent.name, help: Keys.commissionPercent.help) var commissionPercent: Int?
    @Option(name: Keys.shareLifetime.name, help: Keys.shareLifetime.help) var shareLifetime: Int?

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
        var dispatch = DispatchSettings()
        dispatch.radius = Double(try Keys.dispatchRadius.value(dispatchRadius))
        dispatch.drivers = try Keys.dispatchDrivers.value(dispatchDrivers)
        dispatch.offerTimeout = Double(try Keys.offerTimeout.value(offerTimeout))
        dispatch.searchTimeout = Double(try Keys.driverSearch.value(driverSearch))
        let dataDirectory = dataDirectory.resolved()
        return OrdersSettings(
            basics: try ServiceBasics(.orders, bus: bus, common: common),
            dataDirectory: dataDirectory,
            database: try database.location(sqlitePath: URL(fileURLWithPath: dataDirectory).appendingPathComponent("orders.sqlite").path),
            dispatch: dispatch, fares: try fares(), surge: try surgePolicy(),
            commissionPercent: try Keys.commissionPercent.value(commissionPercent),
            payments: try payments.settings(), routes: try routing.source(), city: try city.setting(),
            shareLifetime: TimeInterval(try Keys.shareLifetime.value(shareLifetime)),
            offScript: OffScriptRules(
                noShowWait: TimeInterval(try Keys.noShowWait.value(noShowWait)),
                arrivalRadius: Double(try Keys.arrivalRadius.value(arrivalRadius))),
            concurrency: try workers.resolved())
    }

    /// `--fare` and `--cancellation-fee`, checked.
    func fares() throws -> FareSchedule {
        let setting = Keys.fare.resolve(fare)
        let parts = setting.value.split(separator: ",", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
        guard parts.count == 5, let base = Int(parts[1]), let perKm = Int(parts[2]), let perMinute = Int(parts[3]),
            let minimum = Int(parts[4])
        else {
            throw ConfigurationError(
                "fare (\(setting.origin)) '\(setting.value)' must be currency,base,per_km,per_minute,minimum (e.g. USD,250,120,30,500)")
        }
        let fares = FareSchedule(
            currency: parts[0], baseCents: base, perKilometreCents: perKm, perMinuteCents: perMinute, minimumCents: minimum,
            cancellationFeeCents: try Keys.cancellationFee.value(cancellationFee))
        if let problem = fares.problem { throw ConfigurationError("fare (\(setting.origin)): \(problem)") }
        return fares
    }

    /// `--surge`, checked.
    func surgePolicy() throws -> SurgePolicy {
        let setting = Keys.surge.resolve(surge)
        let parts = setting.value.split(separator: ",", omittingEmptySubsequences: false).map {
            Double($0.trimmingCharacters(in: .whitespaces))
        }
        guard parts.count == 3, let maximum = parts[0], let radius = parts[1], let step = parts[2] else {
            throw ConfigurationError(
                "surge (\(setting.origin)) '\(setting.value)' must be maximum,radius_m,step (e.g. 2.5,2000,0.25; maximum 1 is off)")
        }
        let policy = SurgePolicy(maximum: maximum, radius: radius, step: step)
        if let problem = policy.problem { throw ConfigurationError("surge (\(setting.origin)): \(problem)") }
        return policy
    }
}

/// `ride-orders`' resolved configuration.
public struct OrdersSettings: StoredServiceSettings {
    public var basics: ServiceBasics
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
        basics.summary(
            of: .orders,
            [
                "database": "\(database)",
                "share links": "work until \(Int(shareLifetime)) s after the ride",
                "off-script":
                    "no-show after \(Int(offScript.noShowWait)) s at the pickup; arrival reported within \(Int(offScript.arrivalRadius)) m",
                "dispatch":
                    "\(dispatch.drivers) nearest available drivers within \(Int(dispatch.radius)) m, "
                    + "widening after \(Int(dispatch.offerTimeout)) s, no driver found after \(Int(dispatch.searchTimeout)) s",
                "fare":
                    "\(fares.currency) base \(fares.baseCents), per km \(fares.perKilometreCents), per minute \(fares.perMinuteCents), "
                    + "minimum \(fares.minimumCents), cancellation fee \(fares.cancellationFeeCents) (cents)",
                "surge":
                    surge.isOn
                    ? "up to ×\(surge.maximum) within \(Int(surge.radius)) m, +\(surge.step) per waiting order per driver" : "off",
                "payments": "\(paymentsDescription), commission \(commissionPercent)%",
                "routes": "\(routes) in \(city)",
                "concurrency": "\(concurrency)",
            ])
    }
}
