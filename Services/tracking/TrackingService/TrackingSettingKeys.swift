import SettingsKit

/// `ride-tracking`'s own settings, each declared once: the flags and the values come from here.
enum TrackingSettingKeys {
    static let ingest = SettingKey(
        "ingest", env: "RIDE_TRACKING_INGEST_BIND", default: RideTrackingCommand.defaultIngest,
        "Device ingest (ROUTER) endpoints to bind, comma-separated")
    static let shard = SettingKey(
        "shard", env: "RIDE_TRACKING_SHARD", default: "0/1",
        "This process's shard K/N: it keeps the devices whose id hashes to K of N shards (0/1: unsharded)")
    static let publishableKeys = SettingKey(
        "publishable-keys", env: "RIDE_PUBLISHABLE_KEYS", default: "pk_dev_ridesharing", "Publishable keys devices may use, comma-separated"
    )
    static let deviceOwners = SettingKey(
        "device-owners", env: "RIDE_TRACKING_DEVICE_OWNERS", default: "users",
        "Who says whose a device is: 'users' (a batch naming a new metadata.user_id is accepted only when that account names the device) or 'open' (believed as sent: tracking without users)"
    )
    static let deviceCredentials = SettingKey(
        "device-credentials", env: "RIDE_TRACKING_DEVICE_CREDENTIALS", default: "required",
        "Who may stream as a device on the ingest socket: 'required' (a batch must carry the device's credential from its driver's session, checked with users) or 'off' (the publishable key is enough: tracking without users)"
    )
    static let deviceCredentialRecheckSeconds = IntegerSettingKey(
        "device-credential-recheck-s", env: "RIDE_TRACKING_DEVICE_CREDENTIAL_RECHECK_S", default: 60, range: 1...3600,
        "Seconds a device credential users accepted is believed before it is checked again (how soon a logged-out driver's phone is refused)"
    )
    static let inactiveAfterSeconds = IntegerSettingKey(
        "inactive-after-s", env: "RIDE_TRACKING_INACTIVE_AFTER_S", default: 60, range: 1...86_400,
        "Seconds of silence after which a device is inactive")
    static let futureToleranceSeconds = IntegerSettingKey(
        "future-tolerance-s", env: "RIDE_TRACKING_FUTURE_TOLERANCE_S", default: 300, range: 0...86_400,
        "How far in the future a location's time may be, in seconds")
}
