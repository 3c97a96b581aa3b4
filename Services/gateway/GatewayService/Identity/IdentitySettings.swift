import ArgumentParser
import Foundation
import RideModels
import ServiceKit
import SettingsKit

/// The social sign-in providers the gateway accepts (`POST /v1/auth/oidc/{provider}`); a provider
/// without a client id (app id) is off, and its route answers 404 `provider_not_configured`.
public struct IdentityProviderOptions: ParsableArguments {
    typealias Keys = IdentitySettingKeys
    @Option(name: Keys.appleClientID.name, help: Keys.appleClientID.help) var appleClientID: String?
    @Option(name: Keys.appleIssuer.name, help: Keys.appleIssuer.help) var appleIssuer: String?
    @Option(name: Keys.googleClientID.name, help: Keys.googleClientID.help) var googleClientID: String?
    @Option(name: Keys.googleIssuer.name, help: Keys.googleIssuer.help) var googleIssuer: String?
    @Option(name: Keys.facebookAppID.name, help: Keys.facebookAppID.help) var facebookAppID: String?
    @Option(name: Keys.facebookAppSecret.name, help: Keys.facebookAppSecret.help) var facebookAppSecret: String?
    @Option(name: Keys.facebookGraphURL.name, help: Keys.facebookGraphURL.help) var facebookGraphURL: String?

    public init() {}

    func settings() throws -> IdentitySettings {
        var settings = IdentitySettings()
        let apple = Keys.appleClientID.resolve(appleClientID)
        if !apple.value.isEmpty {
            settings.apple = .init(issuer: try Self.url(Keys.appleIssuer.resolve(appleIssuer)), clientIDs: try Self.list(apple))
        }
        let google = Keys.googleClientID.resolve(googleClientID)
        if !google.value.isEmpty {
            settings.google = .init(issuer: try Self.url(Keys.googleIssuer.resolve(googleIssuer)), clientIDs: try Self.list(google))
        }
        let appID = Keys.facebookAppID.resolve(facebookAppID)
        if !appID.value.isEmpty {
            let secret = try Keys.facebookAppSecret.resolveSecret(facebookAppSecret)
            guard !secret.value.isEmpty else { throw ConfigurationError("facebook app secret: required with the app id (\(appID.origin))") }
            let graph = try Self.url(Keys.facebookGraphURL.resolve(facebookGraphURL))
            settings.facebook = .init(graphURL: graph, appID: appID.value, appSecret: secret.value)
        }
        return settings
    }

    /// The client ids of a comma-separated setting; at least one.
    private static func list(_ setting: Setting) throws -> [String] {
        let ids = setting.value.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        guard !ids.isEmpty else { throw ConfigurationError("\(setting.origin) '\(setting.value)' names no client id") }
        return ids
    }

    /// An http(s) URL, without a trailing slash.
    private static func url(_ setting: Setting) throws -> String {
        guard let url = URL(string: setting.value), url.scheme == "https" || url.scheme == "http", url.host != nil else {
            throw ConfigurationError("\(setting.origin) '\(setting.value)' must be an http:// or https:// URL")
        }
        return setting.value.hasSuffix("/") ? String(setting.value.dropLast()) : setting.value
    }
}

/// The providers as resolved; nil: off.
public struct IdentitySettings: Sendable, Equatable {
    public struct OIDC: Sendable, Equatable {
        public var issuer: String
        public var clientIDs: [String]
    }

    public struct Facebook: Sendable, Equatable {
        public var graphURL: String
        public var appID: String
        public var appSecret: String
    }

    public static let appleIssuer = "https://appleid.apple.com"
    public static let googleIssuer = "https://accounts.google.com"
    public static let graphURL = "https://graph.facebook.com"

    public var apple: OIDC?
    public var google: OIDC?
    public var facebook: Facebook?

    public init() {}

    var summary: String {
        let on = [
            apple.map { "apple (\($0.issuer))" }, google.map { "google (\($0.issuer))" }, facebook.map { "facebook (\($0.graphURL))" },
        ].compactMap { $0 }
        return on.isEmpty ? "none" : on.joined(separator: ", ")
    }
}

/// The gateway's sign-in provider settings, declared once.
enum IdentitySettingKeys {
    static let appleClientID = SettingKey(
        "apple-client-id", env: "RIDE_APPLE_CLIENT_ID", unset: "off",
        "Sign in with Apple: the app's bundle id or Services ID, the ID tokens' audience (comma-separated for several)")
    static let appleIssuer = SettingKey(
        "apple-issuer", env: "RIDE_APPLE_ISSUER", default: IdentitySettings.appleIssuer,
        "Sign in with Apple's issuer; its discovery document names the JWKS")
    static let googleClientID = SettingKey(
        "google-client-id", env: "RIDE_GOOGLE_CLIENT_ID", unset: "off",
        "Google Sign-In: the OAuth client ids the ID tokens are for (comma-separated: Android, iOS, web)")
    static let googleIssuer = SettingKey(
        "google-issuer", env: "RIDE_GOOGLE_ISSUER", default: IdentitySettings.googleIssuer,
        "Google's issuer; its discovery document names the JWKS")
    static let facebookAppID = SettingKey(
        "facebook-app-id", env: "RIDE_FACEBOOK_APP_ID", unset: "off", "Facebook Login: the app id access tokens must be for")
    static let facebookAppSecret = SettingKey(
        "facebook-app-secret", env: "RIDE_FACEBOOK_APP_SECRET",
        "Facebook Login: the app secret debug_token is asked with (or a file named by RIDE_FACEBOOK_APP_SECRET_FILE)")
    static let facebookGraphURL = SettingKey(
        "facebook-graph-url", env: "RIDE_FACEBOOK_GRAPH_URL", default: IdentitySettings.graphURL,
        "Facebook's Graph API, with a version to pin one")
}
