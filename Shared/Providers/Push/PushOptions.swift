import ArgumentParser
import Foundation
import SettingsKit

/// `ride-notifications`' push flags: APNs, FCM, and what both share. Unset, pushes are lines in
/// `<data-dir>/push.jsonl`.
public struct PushOptions: ParsableArguments, Sendable {
    @Option(
        name: .customLong("apns-key-file"),
        help: helpWithEnv(
            "The APNs auth key (.p8, a P-256 key in PEM); with the three below, iPhone tokens go to APNs", env: "RIDE_APNS_KEY_FILE"))
    var apnsKeyFile: String?

    @Option(
        name: .customLong("apns-key-id"), help: helpWithEnv("The key's 10-character id (the provider token's kid)", env: "RIDE_APNS_KEY_ID")
    )
    var apnsKeyID: String?

    @Option(
        name: .customLong("apns-team-id"), help: helpWithEnv("The developer team's id (the provider token's iss)", env: "RIDE_APNS_TEAM_ID")
    )
    var apnsTeamID: String?

    @Option(name: .customLong("apns-topic"), help: helpWithEnv("The app's bundle id (apns-topic)", env: "RIDE_APNS_TOPIC"))
    var apnsTopic: String?

    @Option(
        name: .customLong("apns-url"),
        help: helpWithEnv(
            "APNs's base URL (https://api.sandbox.push.apple.com for development builds)", env: "RIDE_APNS_URL",
            default: PushSettings.apnsProduction))
    var apnsURL: String?

    @Option(
        name: .customLong("fcm-service-account-file"),
        help: helpWithEnv(
            "A Google service account's JSON key with FCM rights; set, FCM tokens go to FCM's HTTP v1 API",
            env: "RIDE_FCM_SERVICE_ACCOUNT_FILE"))
    var fcmServiceAccountFile: String?

    @Option(name: .customLong("fcm-url"), help: helpWithEnv("FCM's base URL", env: "RIDE_FCM_URL", default: PushSettings.fcmProduction))
    var fcmURL: String?

    @Option(
        name: .customLong("push-ca-file"),
        help: helpWithEnv(
            "PEM certificates trusted besides the system's for the push services (a proxy that inspects TLS, a local stand-in)",
            env: "RIDE_PUSH_CA_FILE"))
    var pushCAFile: String?

    @Option(
        name: .customLong("push-retries"),
        help: helpWithEnv(
            "Seconds before each retry of a push the service could not take, comma-separated; then it is given up",
            env: "RIDE_PUSH_RETRIES", default: "5,30,120,600")
    )
    var pushRetries: String?

    public init() {}

    public func settings(environment: [String: String] = ProcessInfo.processInfo.environment) throws -> PushSettings {
        func value(_ given: String?, _ flag: String, _ env: String, _ fallback: String = "") -> (value: String, origin: String) {
            let setting = Setting.resolve(given, flag: flag, env: env, default: fallback, environment: environment)
            return (setting.value.trimmingCharacters(in: .whitespaces), setting.origin)
        }
        var settings = PushSettings(
            retries: try DelayList.parse(value(pushRetries, "push-retries", "RIDE_PUSH_RETRIES", "5,30,120,600"), what: "push retries"))
        let apns = [
            value(apnsKeyFile, "apns-key-file", "RIDE_APNS_KEY_FILE"), value(apnsKeyID, "apns-key-id", "RIDE_APNS_KEY_ID"),
            value(apnsTeamID, "apns-team-id", "RIDE_APNS_TEAM_ID"), value(apnsTopic, "apns-topic", "RIDE_APNS_TOPIC"),
        ]
        if apns.contains(where: { !$0.value.isEmpty }) {
            let names = ["--apns-key-file", "--apns-key-id", "--apns-team-id", "--apns-topic"]
            if let missing = zip(names, apns).first(where: { $0.1.value.isEmpty }) {
                throw ConfigurationError("\(missing.0) is required with the other APNs settings (\(names.joined(separator: ", ")))")
            }
            let url = try Self.baseURL(value(apnsURL, "apns-url", "RIDE_APNS_URL", PushSettings.apnsProduction), flag: "apns-url")
            do {
                settings.apns = APNsConfiguration(
                    key: try APNsConfiguration.key(path: apns[0].value), keyID: apns[1].value, teamID: apns[2].value, topic: apns[3].value,
                    url: url)
            } catch {
                throw ConfigurationError("--apns-key-file (\(apns[0].origin)): \(error)")
            }
        }
        let account = value(fcmServiceAccountFile, "fcm-service-account-file", "RIDE_FCM_SERVICE_ACCOUNT_FILE")
        if !account.value.isEmpty {
            settings.fcmURL = try Self.baseURL(value(fcmURL, "fcm-url", "RIDE_FCM_URL", PushSettings.fcmProduction), flag: "fcm-url")
            do {
                settings.fcm = try FCMServiceAccount.load(path: account.value)
            } catch {
                throw ConfigurationError("--fcm-service-account-file (\(account.origin)): \(error)")
            }
        }
        let ca = value(pushCAFile, "push-ca-file", "RIDE_PUSH_CA_FILE")
        if !ca.value.isEmpty {
            guard let pem = FileManager.default.contents(atPath: ca.value),
                String(decoding: pem, as: UTF8.self).contains("-----BEGIN CERTIFICATE-----")
            else {
                throw ConfigurationError("--push-ca-file (\(ca.origin)): \(ca.value) is not a readable file of PEM certificates")
            }
            settings.caFile = ca.value
        }
        return settings
    }

    /// An http(s) URL without a trailing slash.
    static func baseURL(_ setting: (value: String, origin: String), flag: String) throws -> String {
        guard let url = URL(string: setting.value), url.scheme == "https" || url.scheme == "http", url.host != nil, url.query == nil else {
            throw ConfigurationError("--\(flag) (\(setting.origin)) '\(setting.value.prefix(200))' is not an http(s) URL")
        }
        return setting.value.hasSuffix("/") ? String(setting.value.dropLast()) : setting.value
    }
}

/// The push services `ride-notifications` sends to, resolved and checked.
public struct PushSettings: Sendable {
    public static let apnsProduction = "https://api.push.apple.com"
    public static let fcmProduction = "https://fcm.googleapis.com"

    public var apns: APNsConfiguration?
    public var fcm: FCMServiceAccount?
    public var fcmURL = fcmProduction
    public var caFile: String?
    public var retries: [Duration]
    /// How long a push service has to answer one push.
    public var timeout: Duration = .seconds(10)

    public init(retries: [Duration]) { self.retries = retries }

    public var summary: String {
        let apns = self.apns.map { "APNs \($0.url) (team \($0.teamID), key \($0.keyID), topic \($0.topic))" } ?? "APNs tokens to push.jsonl"
        let fcm = self.fcm.map { "FCM \(fcmURL) (project \($0.projectID))" } ?? "FCM tokens to push.jsonl"
        return "\(apns); \(fcm); retries after \(retries.map { "\($0)" }.joined(separator: ", "))"
    }
}

/// Seconds between tries, comma-separated, as `--webhook-retries` and `--push-retries` take them.
public enum DelayList {
    public static func parse(_ setting: (value: String, origin: String), what: String) throws -> [Duration] {
        let delays = setting.value.split(separator: ",", omittingEmptySubsequences: false).map {
            Double($0.trimmingCharacters(in: .whitespaces))
        }
        guard !delays.isEmpty, delays.count <= 20, delays.allSatisfy({ $0.map { $0 >= 0 && $0 <= 86_400 } ?? false }) else {
            throw ConfigurationError(
                "\(what) (\(setting.origin)) '\(setting.value)' must be up to 20 comma-separated seconds from 0 to 86400")
        }
        return delays.map { .milliseconds(Int(($0 ?? 0) * 1000)) }
    }
}
