import Foundation
import PlatformLauncher
import ServiceKit
import ServiceLifecycle
import SettingsKit

/// `ridectl up --fake-stripe`: the fake provider in ridectl's own process, every rider given a
/// test card (`--auto-card`: the simulation's riders have no app to add one), and the variables
/// that make `ride-orders` charge through it.
struct FakeStripeRun: Sendable {
    let port: Int
    let environment: [String: String]
    private let running: ListeningApplication

    /// Starts the fake on a free port, its keys in `dataDirectory`, events to the gateway at `gatewayPort`.
    static func start(dataDirectory: String, gatewayPort: Int) async throws -> FakeStripeRun {
        let keyFile = URL(fileURLWithPath: dataDirectory).appendingPathComponent("fake-stripe.key").path
        let webhookFile = URL(fileURLWithPath: dataDirectory).appendingPathComponent("fake-stripe-webhook.key").path
        let (secretKey, webhookSecret) = ("sk_test_ridectl_up", "whsec_ridectl_up")
        try secretKey.write(toFile: keyFile, atomically: true, encoding: .utf8)
        try webhookSecret.write(toFile: webhookFile, atomically: true, encoding: .utf8)
        let listen = try FreePort.next()
        let server = FakeStripeServer(
            secretKey: secretKey, webhookURL: "http://127.0.0.1:\(gatewayPort)/v1/providers/stripe/webhook", webhookSecret: webhookSecret,
            publicURL: "http://127.0.0.1:\(listen)", autoCard: true, logger: CLILogging.logger)
        guard let running = try await ListeningApplication.start({ server.application(host: "127.0.0.1", port: listen, onRunning: $0) })
        else {
            throw ConfigurationError("the fake Stripe stopped before it listened")
        }
        let port = running.port
        let environment = [
            "RIDE_PAYMENTS": "stripe", "RIDE_STRIPE_API_BASE": "http://127.0.0.1:\(port)", "RIDE_STRIPE_SECRET_KEY_FILE": keyFile,
            "RIDE_STRIPE_WEBHOOK_SECRET_FILE": webhookFile,
        ]
        return FakeStripeRun(port: port, environment: environment, running: running)
    }

    func stop() async {
        await running.stop()
    }
}
