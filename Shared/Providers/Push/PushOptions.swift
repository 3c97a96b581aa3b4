import ArgumentParser
import Foundation
import SettingsKit

/// `ride-notifications`' push flags: APNs, FCM, and what both share. Unset, pushes are lines in
/// `<data-dir>/push.jsonl`.
public struct PushOptions: ParsableArguments, Sendable {
    typealias Keys = PushSettingKeys
    @Option(name: Keys.apnsKeyFile.name, help: Keys.apnsKeyFile.help) var apnsKeyFile: String?
    @Option(name: Keys.apnsKeyID.name, help: Keys.apnsKeyID.help) var apnsKeyID: String?
    @Option(name: Keys.apnsTeamID.name, help: Keys.apnsTeamID.help) var apnsTeamID: String?
    @Option(name: Keys.apnsTopic.name, help: Keys.apnsTopic.help) var apnsTopic: String?
    @Option(name: Keys.apnsURL.name, help: Keys.apnsURL.help) var apnsURL: String?
    @Option(name: Keys.fcmServiceAccountFile.name, help: Keys.fcmServiceAccountFile.help) var fcmServiceAccountFile: String?
    @Option(name: Keys.fcmURL.name, help: Keys.fcmURL.help) var fcmURL: String?
    @Option(name: Keys.pushCAFile.name, help: Keys.pushCAFile.help) var pushCAFile: String?
    @Option(name: Keys.pushRetries.name, help: Keys.pushRetries.help) var pushRetries: String?

    public init() {}

    public func settings(environment: [String: String] = ProcessInfo.processInfo.environment) throws -> PushSettings {
        func value(_ given: String?, _ key: SettingKey) -> (value: String, origin: String) {
            let setting = key.resolve(given, environment: environment)
            return (setting.value.trimmingCharacters(in: .whitespaces), setting.origin)
        }
        var settings = PushSettings(retries: try DelayList.parse(value(pushRetries, Keys.pushRetries), what: "push retries"))
        let apnsKeys = [Keys.apnsKeyFile, Keys.apnsKeyID, Keys.apnsTeamID, Keys.apnsTopic]
        let apns = zip([apnsKeyFile, apnsKeyID, apnsTeamID, apnsTopic], apnsKeys).map { value($0, $1) }
        if apns.contains(where: { !$0.value.isEmpty }) {
            let names = apnsKeys.map { "--\($0.flag)" }
            if let missing = zip(names, apns).first(where: { $0.1.value.isEmpty }) {
                throw ConfigurationError("\(missing.0) is required with the other APNs settings (\(names.joined(separator: ", ")))")
            }
            let url = try Self.baseURL(value(apnsURL, Keys.apnsURL), flag: Keys.apnsURL.flag)
            do {
                settings.apns = APNsConfiguration(
                    key: try APNsConfiguration.key(path: apns[0].value), keyID: apns[1].value, teamID: apns[2].value, topic: apns[3].value,
                    url: url)
            } catch {
                throw ConfigurationError("--\(Keys.apnsKeyFile.flag) (\(apns[0].origin)): \(error)")
            }
        }
        let account = value(fcmServiceAccountFile, Keys.fcmServiceAccountFile)
        if !account.value.isEmpty {
            settings.fcmURL = try Self.baseURL(value(fcmURL, Keys.fcmURL), flag: Keys.fcmURL.flag)
            do {
                settings.fcm = try FCMServiceAccount.load(path: account.value)
            } catch {
                throw ConfigurationError("--\(Keys.fcmServiceAccountFile.flag) (\(account.origin)): \(error)")
            }
        }
        let ca = value(pushCAFile, Keys.pushCAFile)
        if !ca.value.isEmpty {
            guard let pem = FileManager.default.contents(atPath: ca.value),
                String(decoding: pem, as: UTF8.self).contains("-----BEGIN CERTIFICATE-----")
            else {
                throw ConfigurationError("--\(Keys.pushCAFile.flag) (\(ca.origin)): \(ca.value) is not a readable file of PEM certificates")
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

/// `ride-notifications`' push settings, declared once.
enum PushSettingKeys {
    static let apnsKeyFile = SettingKey(
        "apns-key-file", env: "RIDE_APNS_KEY_FILE",
        "The APNs auth key (.p8, a P-256 key in PEM); with the three below, iPhone tokens go to APNs")
    static let apnsKeyID = SettingKey("apns-key-id", env: "RIDE_APNS_KEY_ID", "The key's 10-character id (the provider token's kid)")
    static let apnsTeamID = SettingKey("apns-team-id", env: "RIDE_APNS_TEAM_ID", "The developer team's id (the provider token's iss)")
    static let apnsTopic = SettingKey("apns-topic", env: "RIDE_APNS_TOPIC", "The app's bundle id (apns-topic)")
    static let apnsURL = SettingKey(
        "apns-url", env: "RIDE_APNS_URL", default: PushSettings.apnsProduction,
        "APNs's base URL (https://api.sandbox.push.apple.com for development builds)")
    static let fcmServiceAccountFile = SettingKey(
        "fcm-service-account-file", env: "RIDE_FCM_SERVICE_ACCOUNT_FILE",
        "A Google service account's JSON key with FCM rights; set, FCM tokens go to FCM's HTTP v1 API")
    static let fcmURL = SettingKey("fcm-url", env: "RIDE_FCM_URL", default: PushSettings.fcmProduction, "FCM's base URL")
    static let pushCAFile = SettingKey(
        "push-ca-file", env: "RIDE_PUSH_CA_FILE",
        "PEM certificates trusted besides the system's for the push services (a proxy that inspects TLS, a local stand-in)")
    static let pushRetries = SettingKey(
        "push-retries", env: "RIDE_PUSH_RETRIES", default: "5,30,120,600",
        "Seconds before each retry of a push the service could not take, comma-separated; then it is given up")
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
