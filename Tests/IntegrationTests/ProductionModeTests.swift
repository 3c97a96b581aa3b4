import Foundation
import ServiceKit
import Testing
import Yams

/// Production mode (`RIDE_MODE=production`, the default of docker-compose.yml and Kubernetes) as an
/// operator who kept a shipped secret would meet it: the real binary refuses to start, naming the
/// secret and where it came from; your own random values start.
@Suite(.timeLimit(.minutes(4))) struct ProductionModeTests {
    static let random = "Jx8fQ2vLr0Tz6WbN4kYh1pCs9DgEa7Um3oVi5RnXqHtF"
    static let shippedPublicKey = "deploy/kubernetes/overlays/dev/curve-keys"

    /// `--check` in production with `environment`, nothing inherited from this shell.
    static func check(_ executable: String, _ arguments: [String] = [], environment: [String: String]) async throws -> (
        status: Int32, stdout: String, stderr: String
    ) {
        try await runCommand(
            "\(Binaries.directory)/\(executable)", arguments + ["--check"],
            environment: environment.merging(["RIDE_MODE": "production"]) { own, _ in own },
            inheritEnvironment: false)
    }

    @Test func everyShippedOrWeakSecretStopsTheStartNamingIt() async throws {
        let scratch = try makeScratchDirectory("production-mode")
        let shippedFile = scratch + "/token-secret"
        try Data("dev-only-token-secret-change-me-0123456789\n".utf8).write(to: URL(fileURLWithPath: shippedFile))
        let refusals: [(executable: String, arguments: [String], environment: [String: String], names: String)] = [
            ("ride-gateway", [], [:], "secret key (default) is a development value this repository ships"),
            ("ride-gateway", [], ["RIDE_SECRET_KEY": "sk_dev_ridesharing"], "secret key (RIDE_SECRET_KEY) is a development value"),
            (
                "ride-gateway", ["--secret-key", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"], [:],
                "secret key (--secret-key) has only 1 distinct characters"
            ),
            ("ride-gateway", ["--secret-key", "short-9aZ"], [:], "secret key (--secret-key) is 9 bytes; at least 16 are needed"),
            ("ride-gateway", ["--secret-key", "please-change-me-before-going-live-42"], [:], "contains 'change-me'"),
            (
                "ride-gateway", ["--secret-key", Self.random, "--curve-keys", Self.shippedPublicKey], [:],
                "CURVE key of this process (--curve-keys) is a development value this repository ships"
            ),
            (
                "ride-users", ["--data-dir", scratch], ["RIDE_TOKEN_SECRET": "dev-only-token-secret-change-me-0123456789"],
                "token signing key (RIDE_TOKEN_SECRET)"
            ),
            (
                "ride-users", ["--data-dir", scratch, "--token-secret-file", shippedFile], [:],
                "token signing key (\(shippedFile)) is a development value"
            ),
            (
                "ride-orders", ["--data-dir", scratch], ["RIDE_DATABASE_URL": "postgres://ride:ride@db:5432/ridesharing"],
                "database password"
            ),
            (
                "ride-trips", ["--data-dir", scratch, "--database-url", "postgres://ride:hunter2@db:5432/ridesharing"], [:],
                "database password"
            ),
        ]
        for refusal in refusals {
            let result = try await Self.check(refusal.executable, refusal.arguments, environment: refusal.environment)
            #expect(result.status == 64, "\(refusal.executable) \(refusal.arguments) \(refusal.environment): \(result.stderr)")
            #expect(
                result.stderr.contains(refusal.names) && result.stderr.contains("RIDE_MODE=production"),
                "\(refusal.executable): \(result.stderr)")
            #expect(!result.stdout.contains("configuration OK"))
        }
        // The same processes with values of their own start (made files are random: not checked).
        let starts: [(executable: String, arguments: [String], environment: [String: String])] = [
            ("ride-gateway", ["--secret-key", Self.random], [:]),
            ("ride-users", ["--data-dir", scratch + "/users"], [:]),
            ("ride-users", ["--data-dir", scratch], ["RIDE_TOKEN_SECRET": Self.random]),
            ("ride-orders", ["--data-dir", scratch, "--database-url", "postgres://ride:\(Self.random)@db:5432/ridesharing"], [:]),
        ]
        for start in starts {
            let result = try await Self.check(start.executable, start.arguments, environment: start.environment)
            #expect(result.status == 0, "\(start.executable) \(start.arguments): \(result.stderr)")
            #expect(result.stdout.contains("mode                  production (secrets checked)"), "\(start.executable): \(result.stdout)")
        }
        let unknown = try await runCommand(
            "\(Binaries.directory)/ride-gateway", ["--check"], environment: ["RIDE_MODE": "prod"], inheritEnvironment: false)
        #expect(
            unknown.status == 64 && unknown.stderr.contains("mode (RIDE_MODE) 'prod' must be development or production"),
            "\(unknown.stderr)")
    }

    /// Development accepts the shipped values and says so, in `--check` and in the log.
    @Test func developmentStartsWithTheShippedSecretsAndWarns() async throws {
        let result = try await runCommand("\(Binaries.directory)/ride-gateway", ["--check"], environment: [:], inheritEnvironment: false)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("mode                  development (1 shipped secret in use)"), "\(result.stdout)")
        try await withTestBus("development-warning") { testBus in
            _ = try await TestGateway.start(on: testBus)
            let log = try String(contentsOfFile: try #require(testBus.supervisor.logPath(of: "gateway")), encoding: .utf8)
            #expect(log.contains("secret key (default) is the development value this repository ships"), "\(log)")
        }
    }

    /// `SecretPolicy.shipped` holds every secret this repository ships: the flags' defaults, the
    /// development overlay's literals and its committed CURVE keys.
    @Test func theShippedListHoldsEverySecretTheRepositoryShips() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let overlay = try String(
            contentsOf: root.appendingPathComponent("deploy/kubernetes/overlays/dev/kustomization.yaml"), encoding: .utf8)
        let document = try #require(try Yams.load(yaml: overlay) as? [String: Any])
        var values: [String] = []
        for generator in (document["secretGenerator"] as? [[String: Any]]) ?? [] {
            for literal in (generator["literals"] as? [String]) ?? [] {
                let value = String(literal.drop { $0 != "=" }.dropFirst())
                // A URL's secret is its password.
                values.append(URLComponents(string: value)?.password ?? value)
            }
        }
        #expect(values.count == 5, "\(values)")
        let keys = root.appendingPathComponent(Self.shippedPublicKey).path
        let publicKeys = try FileManager.default.subpathsOfDirectory(atPath: keys).filter { $0.hasSuffix(".pub") }
        #expect(publicKeys.count == 8, "\(publicKeys)")
        for file in publicKeys { values.append(try CurveKeyDirectory.readKey("\(keys)/\(file)", what: "a public key")) }
        values.append("sk_dev_ridesharing")
        for value in values { #expect(SecretPolicy.shipped.contains(value), "\(value) is shipped, so production must refuse it") }
        #expect(SecretPolicy.shipped == Set(values), "the list holds nothing else: \(SecretPolicy.shipped.subtracting(values))")
    }
}
