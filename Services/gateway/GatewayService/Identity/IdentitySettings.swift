import ArgumentParser
import Foundation
import RideModels
import ServiceKit
import SettingsKit

/// The social sign-in providers the gateway accepts (`POST /v1/auth/oidc/{provider}`); a provider
/// without a client id (app id) is off, and its route answers 404 `provider_not_configured`.
public struct IdentityProviderOptions: ParsableArguments {
    @Option(
        name: .customLong("apple-client-id"),
        help: helpWithEnv(
            "Sign in with Apple: the app's bundle id or Services ID, the ID tokens' audience (comma-separated for several)",
            env: "RIDE_APPLE_CLIENT_ID", default: "off"))
    var appleClientID: String?

    @Option(
        name: .customLong("apple-issuer"),
        help: helpWithEnv(
            "Sign in with Apple's issuer; its discovery document names the JWKS", env: "RIDE_APPLE_ISSUER",
            default: IdentitySettings.appleIssuer))
    var appleIssuer: String?

    @Option(
        name: .customLong("google-client-id"),
        help: helpWithEnv(
            "Google Sign-In: the OAuth client ids the ID tokens are for (comma-separated: Android, iOS, web)", env: "RIDE_GOOGLE_CLIENT_ID",
            default: "off"))
    var googleClientID: String?

    @Option(
        name: .customLong("google-issuer"),
        help: helpWithEnv(
            "Google's issuer; its discovery document names the JWKS", env: "RIDE_GOOGLE_ISSUER", default: IdentitySettings.googleIssuer))
    var googleIssuer: String?

    @Option(
        name: .customLong("facebook-app-id"),
        help: helpWithEnv("Facebook Login: the app id access tokens must be for", env: "RIDE_FACEBOOK_APP_ID", default: "off"))
    var facebookAppID: String?

    @Option(
        name: .customLong("facebook-app-secret"),
        help: helpWithEnv(
            "Facebook Login: the app secret debug_token is asked with (or a file named by RIDE_FACEBOOK_APP_SECRET_FILE)",
            env: "RIDE_FACEBOOK_APP_SECRET"))
    var facebookAppSecret: String?

    @Option(
        name: .customLong("facebook-graph-url"),
        help: helpWithEnv(
            "Facebook's Graph API, with a version to pin one", env: "RIDE_FACEBOOK_GRAPH_URL", default: IdentitySettings.graphURL))
    var facebookGraphURL: String?

    public init() {}

    func settings() throws -> IdentitySettings {
        var settings = IdentitySettings()
        let apple = Setting.resolve(appleClientID, flag: "apple-client-id", env: "RIDE_APPLE_CLIENT_ID", default: "")
        if !apple.value.isEmpty {
            let issuer = try Self.url(
                Setting.resolve(appleIssuer, flag: "apple-issuer", env: "RIDE_APPLE_ISSUER", default: IdentitySettings.appleIssuer))
            settings.apple = .init(issuer: issuer, clientIDs: try Self.list(apple))
        }
        let google = Setting.resolve(googleClientID, flag: "google-client-id", env: "RIDE_GOOGLE_CLIENT_ID", default: "")
        if !google.value.isEmpty {
            let issuer = try Self.url(
                Setting.resolve(googleIssuer, flag: "google-issuer", env: "RIDE_GOOGLE_ISSUER", default: IdentitySettings.googleIssuer))
            settings.google = .init(issuer: issuer, clientIDs: try Self.list(google))
        }
        let appID = Setting.resolve(facebookAppID, flag: "facebook-app-id", env: "RIDE_FACEBOOK_APP_ID", default: "")
        if !appID.value.isEmpty {
            let secret = try Setting.resolveSecret(
                facebookAppSecret, flag: "facebook-app-secret", env: "RIDE_FACEBOOK_APP_SECRET", default: "")
            guard !secret.value.isEmpty else { throw ConfigurationError("facebook app secret: required with the app id (\(appID.origin))") }
            let graph = try Self.url(
                Setting.resolve(
                    facebookGraphURL, flag: "facebook-graph-url", env: "RIDE_FACEBOOK_GRAPH_URL", default: IdentitySettings.graphURL))
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
