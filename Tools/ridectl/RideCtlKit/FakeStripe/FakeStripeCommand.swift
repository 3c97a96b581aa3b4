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

    @Option(
        help: helpWithEnv(
            "Address to listen on (HOST:PORT; port 0 picks a free one)", env: "RIDE_FAKE_STRIPE_LISTEN", default: "127.0.0.1:12111"))
    var listen: String?

    @Option(
        name: .customLong("secret-key-file"),
        help: helpWithEnv("File holding the secret key clients must send", env: "RIDE_STRIPE_SECRET_KEY_FILE"))
    var secretKeyFile: String?

    @Option(
        name: .customLong("webhook-url"),
        help: helpWithEnv("Where events are posted (none: not posted)", env: "RIDE_FAKE_STRIPE_WEBHOOK_URL"))
    var webhookURL: String?

    @Option(
        name: .customLong("webhook-secret-file"),
        help: helpWithEnv("File holding the webhook signing secret (whsec_…)", env: "RIDE_STRIPE_WEBHOOK_SECRET_FILE"))
    var webhookSecretFile: String?

    @Flag(
        name: .customLong("auto-card"),
        help: "Give every new customer a test card (pm_card_visa), as if their app had added one (simulations).")
    var autoCard = false

    func run() async throws {
        let environment = ProcessInfo.processInfo.environment
        let address = try withValidation {
            try HostPort.parse(
                Setting.resolve(listen, flag: "listen", env: "RIDE_FAKE_STRIPE_LISTEN", default: "127.0.0.1:12111"), name: "--listen")
        }
        let secretKey = try withValidation {
            try Self.secret(secretKeyFile, flag: "secret-key-file", env: "RIDE_STRIPE_SECRET_KEY_FILE", environment: environment)
        }
        let webhook = Setting.resolve(
            webhookURL, flag: "webhook-url", env: "RIDE_FAKE_STRIPE_WEBHOOK_URL", default: "", environment: environment
        ).value
        let webhookSecret =
            webhook.isEmpty
            ? ""
            : try withValidation {
                try Self.secret(
                    webhookSecretFile, flag: "webhook-secret-file", env: "RIDE_STRIPE_WEBHOOK_SECRET_FILE", environment: environment)
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

    static func secret(_ path: String?, flag: String, env: String, environment: [String: String]) throws -> String {
        let setting = Setting.resolve(path, flag: flag, env: env, default: "", environment: environment)
        guard !setting.value.isEmpty else { throw ConfigurationError("--\(flag) (or \(env)) is required") }
        guard let data = FileManager.default.contents(atPath: setting.value) else {
            throw ConfigurationError("--\(flag) (\(setting.origin)): cannot read \(setting.value)")
        }
        let text = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard !text.isEmpty else { throw ConfigurationError("--\(flag) (\(setting.origin)): \(setting.value) is empty") }
        return text
    }
}
