import ArgumentParser
import Foundation
import ServiceKit
import SettingsKit

/// `ridectl fake-stripe`: a local server speaking Stripe's API, for tests and `make run`.
struct FakeStripeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fake-stripe",
        abstract:
            "A local stand-in for Stripe's API (customers, cards, card pages, Connect accounts, PaymentIntents, refunds) with signed webhooks.",
        discussion: """
            Speaks Stripe's wire format: form-encoded POST bodies, Authorization: Bearer <secret key>, \
            Idempotency-Key (the same key and request answer the first reply; another request with the key \
            is 400 idempotency_error), error objects, lists paged by starting_after. Cards are attached from \
            Stripe's test tokens (pm_card_visa, pm_card_mastercard, pm_card_chargeDeclined), or typed on the \
            page of a Checkout Session in setup mode (GET /checkout/<id>; 4242 4242 4242 4242 pays, \
            4000 0000 0000 0002 is declined when charged). GET /connect/onboarding/<account> finishes a \
            driver's onboarding. Events (payment_intent.succeeded, \
            payment_intent.payment_failed, account.updated) are posted to --webhook-url with a Stripe-Signature. \
            Objects live in memory until it stops.

            Example (then ride-orders --payments stripe --stripe-api-base http://127.0.0.1:12111 …):
              ridectl fake-stripe --listen 127.0.0.1:12111 --secret-key-file .data/stripe.key \\
                --webhook-url http://127.0.0.1:8080/v1/providers/stripe/webhook --webhook-secret-file .data/stripe-webhook.key
            """)

    enum Keys {
        static let listen = SettingKey(
            "listen", env: "RIDE_FAKE_STRIPE_LISTEN", default: "127.0.0.1:12111",
            "Address to listen on (HOST:PORT; port 0 picks a free one)")
        static let secretKeyFile = SettingKey(
            "secret-key-file", env: "RIDE_STRIPE_SECRET_KEY_FILE", "File holding the secret key clients must send")
        static let webhookURL = SettingKey("webhook-url", env: "RIDE_FAKE_STRIPE_WEBHOOK_URL", "Where events are posted (none: not posted)")
        static let webhookSecretFile = SettingKey(
            "webhook-secret-file", env: "RIDE_STRIPE_WEBHOOK_SECRET_FILE", "File holding the webhook signing secret (whsec_…)")
    }
    @Option(name: Keys.listen.name, help: Keys.listen.help) var listen: String?
    @Option(name: Keys.secretKeyFile.name, help: Keys.secretKeyFile.help) var secretKeyFile: String?
    @Option(name: Keys.webhookURL.name, help: Keys.webhookURL.help) var webhookURL: String?
    @Option(name: Keys.webhookSecretFile.name, help: Keys.webhookSecretFile.help) var webhookSecretFile: String?

    @Flag(
        name: .customLong("auto-card"),
        help: "Give every new customer a test card (pm_card_visa), as if their app had added one (simulations).")
    var autoCard = false

    func run() async throws {
        let environment = ProcessInfo.processInfo.environment
        let address = try withValidation {
            try HostPort.parse(Keys.listen.resolve(listen, environment: environment), name: "--listen")
        }
        let secretKey = try withValidation {
            try Self.secret(secretKeyFile, Keys.secretKeyFile, environment: environment)
        }
        let webhook = Keys.webhookURL.resolve(webhookURL, environment: environment).value
        let webhookSecret =
            webhook.isEmpty
            ? ""
            : try withValidation {
                try Self.secret(webhookSecretFile, Keys.webhookSecretFile, environment: environment)
            }
        let server = FakeStripeServer(
            secretKey: secretKey, webhookURL: webhook.isEmpty ? nil : webhook, webhookSecret: webhookSecret,
            publicURL: "http://\(address.host):\(address.port)",
            autoCard: autoCard,
            logger: CLILogging.logger)
        let app = server.application(host: address.host, port: address.port) { port in
            Output.out(
                "ridectl fake-stripe: Stripe's API on http://\(address.host):\(port)\(webhook.isEmpty ? "" : ", events to \(webhook)")\n")
        }
        try await app.runService()
    }

    static func secret(_ path: String?, _ key: SettingKey, environment: [String: String]) throws -> String {
        let setting = key.resolve(path, environment: environment)
        let flag = key.flag
        guard !setting.value.isEmpty else { throw ConfigurationError("--\(flag) (or \(key.env)) is required") }
        guard let data = FileManager.default.contents(atPath: setting.value) else {
            throw ConfigurationError("--\(flag) (\(setting.origin)): cannot read \(setting.value)")
        }
        let text = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard !text.isEmpty else { throw ConfigurationError("--\(flag) (\(setting.origin)): \(setting.value) is empty") }
        return text
    }
}
