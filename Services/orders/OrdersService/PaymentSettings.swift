import ArgumentParser
import Foundation
import ServiceKit
import SettingsKit

/// `ride-orders`' payment flags: the ledger stand-in (default) or a provider speaking Stripe's API.
public struct PaymentOptions: ParsableArguments {
    /// Each payment setting, declared once: the flags and the values come from here.
    enum Keys {
        static let provider = SettingKey(
            "payments", env: "RIDE_PAYMENTS", default: "ledger", "Payment provider: ledger (books in the data directory) or stripe")
        static let apiBase = SettingKey(
            "stripe-api-base", env: "RIDE_STRIPE_API_BASE", default: "https://api.stripe.com",
            "Stripe's API (or a server speaking it, e.g. ridectl fake-stripe)")
        static let secretKeyFile = SettingKey(
            "stripe-secret-key-file", env: "RIDE_STRIPE_SECRET_KEY_FILE",
            "File holding the Stripe secret key (sk_test_… / sk_live_… / rk_…); required with --payments stripe")
        static let webhookSecretFile = SettingKey(
            "stripe-webhook-secret-file", env: "RIDE_STRIPE_WEBHOOK_SECRET_FILE",
            "File holding the webhook endpoint's signing secret (whsec_…); required with --payments stripe")
        static let onboardingReturnURL = SettingKey(
            "stripe-onboarding-return-url", env: "RIDE_STRIPE_ONBOARDING_RETURN_URL",
            default: "http://localhost:8080/v1/me/payouts/onboarding",
            "Where Stripe's Connect onboarding sends a driver back (return_url and refresh_url)")
    }

    @Option(name: Keys.provider.name, help: Keys.provider.help) var provider: String?
    @Option(name: Keys.apiBase.name, help: Keys.apiBase.help) var apiBase: String?
    @Option(name: Keys.secretKeyFile.name, help: Keys.secretKeyFile.help) var secretKeyFile: String?
    @Option(name: Keys.webhookSecretFile.name, help: Keys.webhookSecretFile.help) var webhookSecretFile: String?
    @Option(name: Keys.onboardingReturnURL.name, help: Keys.onboardingReturnURL.help) var onboardingReturnURL: String?

    public init() {}

    public func settings(environment: [String: String] = ProcessInfo.processInfo.environment) throws -> PaymentSettings {
        let provider = Keys.provider.resolve(self.provider, environment: environment)
        switch provider.value {
        case "ledger": return .ledger
        case "stripe":
            let base = Keys.apiBase.resolve(apiBase, environment: environment)
            guard let url = URL(string: base.value), ["http", "https"].contains(url.scheme ?? ""), url.host != nil else {
                throw ConfigurationError("stripe-api-base (\(base.origin)) '\(base.value)' must be an http(s) URL")
            }
            let secretKey = try Self.secret(secretKeyFile, Keys.secretKeyFile, environment: environment)
            guard secretKey.hasPrefix("sk_") || secretKey.hasPrefix("rk_") else {
                throw ConfigurationError(
                    "stripe-secret-key-file: the key must be a secret or restricted key (sk_… or rk_…), not a publishable one")
            }
            let webhookSecret = try Self.secret(webhookSecretFile, Keys.webhookSecretFile, environment: environment)
            let returnURL = Keys.onboardingReturnURL.resolve(onboardingReturnURL, environment: environment).value
            return .stripe(
                StripeSettings(apiBase: base.value, secretKey: secretKey, webhookSecret: webhookSecret, onboardingReturnURL: returnURL))
        default: throw ConfigurationError("payments (\(provider.origin)) '\(provider.value)' must be ledger or stripe")
        }
    }

    /// A secret from the file the flag or variable names (one trailing newline dropped).
    static func secret(_ flagValue: String?, _ key: SettingKey, environment: [String: String]) throws -> String {
        let path = key.resolve(flagValue, environment: environment)
        let flag = key.flag
        guard !path.value.isEmpty else { throw ConfigurationError("\(flag) (or \(key.env)) is required with --payments stripe") }
        guard let data = FileManager.default.contents(atPath: path.value) else {
            throw ConfigurationError("\(flag) (\(path.origin)): cannot read \(path.value)")
        }
        let text = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard !text.isEmpty else { throw ConfigurationError("\(flag) (\(path.origin)): \(path.value) is empty") }
        return text
    }
}

/// Which provider charges rides.
public enum PaymentSettings: Sendable, Equatable {
    case ledger
    case stripe(StripeSettings)
}

public struct StripeSettings: Sendable, Equatable {
    public var apiBase: String
    public var secretKey: String
    public var webhookSecret: String
    public var onboardingReturnURL: String

    /// For the configuration summary: never the secrets, only which kind of key (test or live).
    public var summary: String {
        "stripe \(apiBase) (\(secretKey.hasPrefix("sk_live_") || secretKey.hasPrefix("rk_live_") ? "live" : "test") key)"
    }
}
