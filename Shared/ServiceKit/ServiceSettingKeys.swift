import Bus
import SettingsKit

/// The settings every service shares (`CommonOptions`, `BusClientOptions`, `WorkerOptions`,
/// `DataDirectoryOptions`), declared once: the options' names and help and the resolved values come from here.
public enum ServiceSettingKeys {
    /// No default here: each executable has its own port (`ServicePorts`).
    public static let http = SettingKey("http", env: "RIDE_HTTP_ADDR", "Address of the /health and /metrics HTTP listener (HOST:PORT)")
    public static let logFormat = SettingKey("log-format", env: "RIDE_LOG_FORMAT", default: "text", "Log line format: text or json")
    public static let logLevel = SettingKey(
        "log-level", env: "RIDE_LOG_LEVEL", default: "info", "Lowest level logged: trace, debug, info, notice, warning, error, critical")
    public static let mode = SettingKey(
        RunMode.flag, env: RunMode.environment, default: RunMode.development.rawValue,
        "development (shipped secrets allowed, with a warning) or production (a shipped or weak secret stops the start, named)")
    public static let insecureBus = SettingKey(
        BusExposure.insecureFlag, env: BusExposure.insecureEnvironment, unset: "off",
        "Allow a plain-TCP bus (no CURVE) on addresses other machines reach: for a network that is private on purpose. "
            + "Without it such a process refuses to start")
    public static let concurrency = IntegerSettingKey(
        "concurrency", env: "RIDE_WORKER_CONCURRENCY", default: defaultWorkerConcurrency, range: 1...1024,
        "Requests served at once (MDP worker connections)")
    public static let publish = SettingKey(
        "pub", env: BusContract.publishEnvironment, default: BusContract.publishEndpoint,
        "Bus event ingress to publish to (comma-separated: every instance of the bus)")
    public static let subscribe = SettingKey(
        "sub", env: BusContract.subscribeEnvironment, default: BusContract.subscribeEndpoint,
        "Bus event egress to subscribe to (comma-separated: every instance of the bus)")
    public static let broker = SettingKey(
        "broker", env: BusContract.brokerEnvironment, default: BusContract.brokerEndpoint,
        "7/MDP broker to send requests through and serve ops on (comma-separated: every broker, first preferred)")

    /// `--data-dir`; `holding` says what the directory holds for this executable.
    public static func dataDirectory(holding: String) -> SettingKey {
        SettingKey("data-dir", env: "RIDE_DATA_DIR", default: "./.data", holding)
    }
}
