import RideModels
import SettingsKit

/// `ride-orders`' own settings, each declared once: the flags and the values come from here.
enum OrdersSettingKeys {
    static let dispatchRadius = IntegerSettingKey(
        "dispatch-radius-m", env: "RIDE_DISPATCH_RADIUS_M", default: 3000, range: 100...100_000,
        "How far from the pickup drivers are offered a new order, in metres")
    static let dispatchDrivers = IntegerSettingKey(
        "dispatch-drivers", env: "RIDE_DISPATCH_DRIVERS", default: 3, range: 1...50,
        "How many of the nearest available drivers a new order is offered to")
    static let offerTimeout = IntegerSettingKey(
        "offer-timeout-s", env: "RIDE_OFFER_TIMEOUT_S", default: 15, range: 1...3600,
        "Seconds an offer waits for an accept before the order is offered farther")
    static let driverSearch = IntegerSettingKey(
        "driver-search-s", env: "RIDE_DRIVER_SEARCH_S", default: 180, range: 1...86_400,
        "Seconds a new order waits for a driver to accept it before it ends CANCELLED, reason no_driver_found")
    static let fare = SettingKey(
        "fare", env: "RIDE_FARE", default: "USD,250,120,30,500",
        "Fare schedule: currency,base,per_km,per_minute,minimum (amounts in cents)")
    static let cancellationFee = IntegerSettingKey(
        "cancellation-fee", env: "RIDE_CANCELLATION_FEE", default: 0, range: 0...100_000,
        "What a rider pays, in cents of the fare's currency, for cancelling after the driver reached the pickup (the driver earns their share); 0 is no fee"
    )
    static let noShowWait = IntegerSettingKey(
        "no-show-wait-s", env: "RIDE_NO_SHOW_WAIT_S", default: OffScriptRules.defaultNoShowWait, range: 0...3600,
        "Seconds a driver waits at the pickup before they may end the ride as a no-show (the rider pays the cancellation fee)")
    static let arrivalRadius = IntegerSettingKey(
        "arrival-radius-m", env: "RIDE_ARRIVAL_RADIUS_M", default: OffScriptRules.defaultArrivalRadius, range: 20...5000,
        "Metres from the pickup or drop-off within which a driver may report arriving where the geofence has not fired")
    static let surge = SettingKey(
        "surge", env: "RIDE_SURGE", default: "1,2000,0.25",
        "Surge pricing: maximum,radius_m,step — fares rise by step per waiting order per available driver near the pickup, up to maximum; maximum 1 is off"
    )
    static let commissionPercent = IntegerSettingKey(
        "commission-percent", env: "RIDE_COMMISSION_PERCENT", default: 20, range: 0...100,
        "The platform's share of each fare; the driver earns the rest")
    static let shareLifetime = IntegerSettingKey(
        "share-lifetime-s", env: "RIDE_SHARE_LIFETIME_S", default: Int(ShareRules.lifetimeAfterRide), range: 0...2_592_000,
        "Seconds a ride's share link keeps working after the ride ended (then 410 share_expired)")
}
