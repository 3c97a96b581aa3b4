import Foundation
import PlatformLauncher
import Testing
import Wire

/// `make run UP_FLAGS=--fake-stripe` (`ridectl up --simulate --fake-stripe`): the simulated rides
/// are charged through the fake Stripe — PaymentIntents with the driver's share transferred to
/// their Express account — and the charges are in the drivers' earnings.
@Suite struct UpFakeStripeTests {
    static let offset = 8_000  // bus 13555–, gateway 16080, HTTP 17100–: clear of the other suites that run `up`

    @Test(.timeLimit(.minutes(5)))
    func upWithTheFakeStripeChargesSimulatedRidesAndPaysTheirDrivers() async throws {
        let scratch = try makeScratchDirectory("up-stripe")
        let supervisor = ProcessSupervisor(output: .files(directory: scratch))
        try supervisor.start(
            name: "up", executable: Binaries.ridectl,
            arguments: [
                "up", "--simulate", "--fake-stripe", "--port-offset", "\(Self.offset)", "--data-dir", "\(scratch)/data", "--bin-dir",
                Binaries.directory,
            ],
            environment: ["RIDE_PASSWORD_ROUNDS": "2000"])  // the simulation signs up twenty people first
        defer { supervisor.killAll() }
        let log = { (try? String(contentsOfFile: supervisor.logPath(of: "up")!, encoding: .utf8)) ?? "" }
        func fakeBase() -> String? {
            log().split(separator: "\n").lazy.compactMap { line -> String? in
                guard let range = line.range(of: "charged through a fake Stripe on ") else { return nil }
                return line[range.upperBound...].split(separator: " ").first.map(String.init)
            }.first
        }
        let started = ContinuousClock.now + .seconds(60)
        while fakeBase() == nil, ContinuousClock.now < started { try await Task.sleep(for: .milliseconds(500)) }
        let base = try #require(fakeBase(), "no fake Stripe: \(log().suffix(3000))")
        let key = "sk_test_ridectl_up"
        var paid: JSONValue?
        let charged = ContinuousClock.now + .seconds(180)
        while paid == nil, ContinuousClock.now < charged {
            try await Task.sleep(for: .seconds(2))
            let intents =
                try await PaymentsIntegrationTests.stripe("GET", base + "/v1/payment_intents?limit=100", key: key)["data"]?.arrayValue ?? []
            paid = intents.first { $0["status"] == "succeeded" && $0["transfer_data"]?["destination"]?.stringValue != nil }
        }
        let intent = try #require(paid, "no simulated ride charged: \(log().suffix(3000))")
        let account = try #require(intent["transfer_data"]?["destination"]?.stringValue)
        let share = (intent["amount"]?.numberValue ?? 0) - (intent["application_fee_amount"]?.numberValue ?? 0)
        #expect(share > 0, "\(intent)")
        let transfers =
            try await PaymentsIntegrationTests.stripe("GET", base + "/v1/transfers?destination=\(account)", key: key)["data"]?.arrayValue
            ?? []
        #expect(transfers.contains { $0["amount"]?.numberValue == share }, "\(transfers)")
        // The driver the account stands for sees it in their earnings.
        let driver = try #require(
            try await PaymentsIntegrationTests.stripe("GET", base + "/v1/accounts/\(account)", key: key)["metadata"]?["driver_id"]?
                .stringValue)
        let broker = "tcp://127.0.0.1:\(5557 + Self.offset)"
        try await eventually("the driver's earnings count it", timeout: .seconds(30)) {
            let earnings = try await runCommand(
                Binaries.ridectl, ["call", "orders", "earnings", #"{"caller":{"role":"driver","id":"\#(driver)"}}"#, "--broker", broker])
            let total = (try? JSONCoding.decode(JSONValue.self, from: Array(earnings.stdout.utf8)))?["total_cents"]?.numberValue ?? 0
            return total >= share
        }
        supervisor.signal("up", SIGINT)
        #expect(await supervisor.waitForExit("up", timeout: .seconds(30)) == 0)
        try? FileManager.default.removeItem(atPath: scratch)
    }
}
