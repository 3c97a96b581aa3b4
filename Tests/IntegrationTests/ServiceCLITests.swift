import Foundation
import ServiceKit
import Testing

/// The lifecycle services and the simulator as an operator meets them: --help names every flag
/// and its variable; a malformed flag or variable exits 64 with a message naming it.
@Suite(.timeLimit(.minutes(4))) struct ServiceCLITests {
    @Test(arguments: [
        (
            "ride-users",
            [
                "--database-url", "RIDE_DATABASE_URL", "--token-secret-file", "RIDE_TOKEN_SECRET_FILE", "--token-previous-secret-file",
                "RIDE_TOKEN_PREVIOUS_SECRET_FILE",
                "--token-ttl-s",
                "RIDE_TOKEN_TTL_S", "--refresh-ttl-s", "RIDE_REFRESH_TTL_S", "--password-rounds",
                "RIDE_PASSWORD_ROUNDS", "--reauthentication-window-s", "RIDE_REAUTHENTICATION_WINDOW_S", "--driver-approval",
                "RIDE_DRIVER_APPROVAL",
                "--document-check-s", "RIDE_DOCUMENT_CHECK_S",
            ]
        ),
        (
            "ride-orders",
            [
                "--database-url", "RIDE_DATABASE_URL", "--dispatch-radius-m", "RIDE_DISPATCH_RADIUS_M", "--dispatch-drivers",
                "RIDE_DISPATCH_DRIVERS", "--offer-timeout-s",
                "RIDE_OFFER_TIMEOUT_S", "--driver-search-s", "RIDE_DRIVER_SEARCH_S", "--fare", "RIDE_FARE",
            ]
        ),
        ("ride-trips", ["--data-dir", "RIDE_DATA_DIR", "--database-url", "RIDE_DATABASE_URL", "--concurrency", "RIDE_WORKER_CONCURRENCY"]),
        (
            "ride-notifications",
            [
                "--data-dir", "RIDE_DATA_DIR", "--database-url", "RIDE_DATABASE_URL", "--webhook-timeout-s", "RIDE_WEBHOOK_TIMEOUT_S",
                "--webhook-retries", "RIDE_WEBHOOK_RETRIES",
                "--apns-key-file", "RIDE_APNS_KEY_FILE", "--apns-key-id", "RIDE_APNS_KEY_ID", "--apns-team-id", "RIDE_APNS_TEAM_ID",
                "--apns-topic", "RIDE_APNS_TOPIC",
                "--apns-url", "RIDE_APNS_URL", "--fcm-service-account-file", "RIDE_FCM_SERVICE_ACCOUNT_FILE", "--fcm-url", "RIDE_FCM_URL",
                "--push-ca-file", "RIDE_PUSH_CA_FILE", "--push-retries", "RIDE_PUSH_RETRIES",
            ]
        ),
        (
            "ride-tracking",
            [
                "--shard", "RIDE_TRACKING_SHARD", "K/N", "tracking.shard.K", "--ingest", "RIDE_TRACKING_INGEST_BIND", "--data-dir",
                "RIDE_DATA_DIR",
                "--database-url", "RIDE_DATABASE_URL", "--device-owners", "RIDE_TRACKING_DEVICE_OWNERS",
            ]
        ),
        (
            "ride-gateway",
            [
                "--listen", "RIDE_GATEWAY_LISTEN", "--public-url", "RIDE_PUBLIC_URL", "--publishable-key", "RIDE_PUBLISHABLE_KEY",
                "--account-id", "RIDE_ACCOUNT_ID", "--secret-key", "RIDE_SECRET_KEY",
                "--apple-client-id", "RIDE_APPLE_CLIENT_ID", "--google-client-id", "RIDE_GOOGLE_CLIENT_ID", "--facebook-app-id",
                "RIDE_FACEBOOK_APP_ID",
                "--facebook-app-secret", "RIDE_FACEBOOK_APP_SECRET", "--hypertrack-webhook-secret", "RIDE_HYPERTRACK_WEBHOOK_SECRET",
            ]
        ),
    ])
    func helpNamesEveryFlagAndItsVariable(executable: String, flags: [String]) async throws {
        let (status, out, _) = try await runCommand("\(Binaries.directory)/\(executable)", ["--help"])
        #expect(status == 0)
        for text in flags + [
            "--broker", "RIDE_BROKER", "--http", "RIDE_HTTP_ADDR", "--check", "Exit codes", "--insecure-bus", "RIDE_INSECURE_BUS", "--mode",
            "RIDE_MODE",
        ] {
            #expect(out.contains(text), "\(executable) --help mentions \(text)")
        }
    }

    @Test(arguments: [
        "ride-bus", "ride-users", "ride-orders", "ride-trips", "ride-notifications", "ride-tracking", "ride-gateway", "ridectl",
        "driver-example",
    ])
    func everyExecutableSaysItsVersion(executable: String) async throws {
        let (status, out, _) = try await runCommand("\(Binaries.directory)/\(executable)", ["--version"])
        #expect(status == 0 && out == PlatformVersion.current + "\n", "\(executable) --version: \(out)")
    }

    /// The example driver app without a publishable key says where to put one and exits 64: no crash.
    @Test func theDriverExampleWithoutAKeySaysSo() async throws {
        let (status, _, err) = try await runCommand(
            "\(Binaries.directory)/driver-example", [], environment: ["HyperTrackPublishableKey": "", "HYPERTRACK_CONFIG": ""],
            inheritEnvironment: false)
        #expect(status == 64, "\(err)")
        #expect(err.contains("HyperTrackPublishableKey") && !err.contains("Fatal error"), "\(err)")
    }

    @Test(arguments: [
        ("ride-users", ["--password-rounds", "5"], [String: String](), "password-rounds (--password-rounds) 5 is out of range"),
        (
            "ride-users", ["--reauthentication-window-s", "3601"], [String: String](),
            "reauthentication-window-s (--reauthentication-window-s) 3601 is out of range"
        ),
        ("ride-users", [], ["RIDE_TOKEN_SECRET": "short"], "RIDE_TOKEN_SECRET must be at least 32 characters"),
        ("ride-users", [], ["RIDE_DATABASE_URL": "mysql://u@h/db"], "RIDE_DATABASE_URL: scheme \"mysql\" is not postgres://"),
        ("ride-users", ["--database-url", "postgres://u:secret@h:99999/db"], [:], "--database-url: port 99999 is not from 1 to 65535"),
        ("ride-orders", ["--fare", "cheap"], [:], "fare (--fare) 'cheap' must be currency,base,per_km,per_minute,minimum"),
        ("ride-orders", [], ["RIDE_DATABASE_URL": "postgres://ride@db"], "RIDE_DATABASE_URL: no database name in postgres://ride@db"),
        ("ride-users", ["--driver-approval", "later"], [:], "driver approval (--driver-approval) 'later' must be automatic or required"),
        ("ride-users", [], ["RIDE_DOCUMENT_CHECK_S": "0"], "document-check-s (RIDE_DOCUMENT_CHECK_S) 0 is out of range"),
        ("ride-orders", [], ["RIDE_FARE": "usd,1,1,1,1"], "fare (RIDE_FARE): currency: must be a three-letter code"),
        ("ride-orders", ["--dispatch-drivers", "0"], [:], "dispatch-drivers (--dispatch-drivers) 0 is out of range"),
        ("ride-orders", [], ["RIDE_DRIVER_SEARCH_S": "0"], "driver-search-s (RIDE_DRIVER_SEARCH_S) 0 is out of range"),
        ("ride-orders", ["--cancellation-fee", "100001"], [:], "cancellation-fee (--cancellation-fee) 100001 is out of range"),
        ("ride-trips", ["--concurrency", "0"], [:], "concurrency (--concurrency) 0 is out of range"),
        ("ride-trips", [], ["RIDE_DATABASE_URL": "mysql://u@h/db"], "RIDE_DATABASE_URL: scheme \"mysql\" is not postgres://"),
        ("ride-gateway", ["--listen", "8080"], [:], "listen address"),
        (
            "ride-tracking", ["--shard", "2/2"], [:],
            "shard (--shard) '2/2': the shard K must be from 0 to 1 (shards are counted from 0), got 2"
        ),
        ("ride-tracking", ["--shard", "0/65"], [:], "shard (--shard) '0/65': the shard count N must be from 1 to 64, got 65"),
        ("ride-tracking", [], ["RIDE_TRACKING_SHARD": "half"], "shard (RIDE_TRACKING_SHARD) 'half' must be K/N"),
        ("ride-tracking", ["--database-url", "postgres://ride@db"], [:], "--database-url: no database name in postgres://ride@db"),
        (
            "ride-tracking", [], ["RIDE_TRACKING_DEVICE_OWNERS": "anyone"],
            "device owners (RIDE_TRACKING_DEVICE_OWNERS) 'anyone' must be users or open"
        ),
        (
            "ride-tracking", ["--device-credentials", "maybe"], [:],
            "device credentials (--device-credentials) 'maybe' must be required or off"
        ),
        ("ridectl", ["simulate", "--ingest", "tcp://127.0.0.1:5558,,tcp://127.0.0.1:5658"], [:], "device ingest (--ingest)"),
        ("ridectl", ["up", "--tracking-shards", "9"], [:], "--tracking-shards must be from 1 to 8, got 9"),
        (
            "ride-notifications", ["--webhook-retries", "1,x"], [:],
            "webhook retries (--webhook-retries) '1,x' must be up to 20 comma-separated seconds"
        ),
        (
            "ride-notifications", ["--push-retries", "5,,5"], [:],
            "push retries (--push-retries) '5,,5' must be up to 20 comma-separated seconds"
        ),
        ("ride-notifications", ["--apns-key-id", "KEY1234567"], [:], "--apns-key-file is required with the other APNs settings"),
        (
            "ride-notifications",
            ["--apns-key-file", "/etc/hostname", "--apns-key-id", "K", "--apns-team-id", "T", "--apns-topic", "com.example"], [:],
            "--apns-key-file (--apns-key-file): /etc/hostname is not an APNs key (a P-256 private key in PEM, the .p8 file)"
        ),
        (
            "ride-notifications", [], ["RIDE_FCM_SERVICE_ACCOUNT_FILE": "/etc/hostname"],
            "--fcm-service-account-file (RIDE_FCM_SERVICE_ACCOUNT_FILE): /etc/hostname is not a service account's JSON key file"
        ),
        (
            "ride-notifications", [], ["RIDE_PUSH_CA_FILE": "/etc/hostname"],
            "--push-ca-file (RIDE_PUSH_CA_FILE): /etc/hostname is not a readable file of PEM certificates"
        ),
        ("ride-notifications", [], ["RIDE_WEBHOOK_TIMEOUT_S": "0"], "webhook-timeout-s (RIDE_WEBHOOK_TIMEOUT_S) 0 is out of range"),
        ("ride-notifications", [], ["RIDE_DATABASE_URL": "mysql://u@h/db"], "RIDE_DATABASE_URL: scheme \"mysql\" is not postgres://"),
        ("ride-gateway", [], ["RIDE_PUBLIC_URL": "ftp://x"], "public URL (RIDE_PUBLIC_URL) 'ftp://x' must be an http:// or https:// URL"),
        ("ride-gateway", ["--secret-key", "a:b"], [:], "secret key (--secret-key) must be non-empty and without ':'"),
        (
            "ride-gateway", [], ["RIDE_HYPERTRACK_WEBHOOK_SECRET_FILE": "/nonexistent/hypertrack"],
            "RIDE_HYPERTRACK_WEBHOOK_SECRET_FILE: cannot read /nonexistent/hypertrack"
        ),
        (
            "ride-gateway", [], ["RIDE_ADDRESS_ATTEMPTS_PER_MIN": "none"],
            "address-attempts-per-min (RIDE_ADDRESS_ATTEMPTS_PER_MIN) 'none' is not a whole number"
        ),
        (
            "ride-gateway", [], ["RIDE_TOKEN_REQUESTS_PER_MIN": "0"],
            "token-requests-per-min (RIDE_TOKEN_REQUESTS_PER_MIN) 0 is out of range"
        ),
        ("ride-gateway", ["--forwarded-for-hops", "11"], [:], "forwarded-for-hops (--forwarded-for-hops) 11 is out of range"),
        ("ridectl", ["simulate", "--speedup", "9"], [:], "--speedup must be from 1 to 6"),
        ("ridectl", ["simulate", "--driver-cancel-rate", "2"], [:], "--driver-cancel-rate must be from 0 to 1, got 2.0"),
        ("ridectl", ["simulate", "--center", "north"], [:], "--center must be lat,lon"),
        ("ridectl", ["bench", "lifecycle", "--concurrent", "0"], [:], "--concurrent must be from 1 to 5000"),
        ("ridectl", ["bench", "routes", "--routes", "5"], [:], "--routes must be at least 100"),
        ("ridectl", ["bench", "logins", "--inflight", "0"], [:], "--seconds must be positive and --inflight at least 1"),
        ("ride-orders", ["--curve-keys", "/nowhere"], [:], "CURVE: cannot read server public key from /nowhere/server.pub"),
        ("ride-bus", [], ["RIDE_CURVE_SERVER_KEY": "short"], "CURVE: RIDE_CURVE_SERVER_KEY: a CURVE key is 40 Z85 characters, got 5"),
        (
            "ridectl", ["tail", "--curve-keys", "/nowhere", "--timeout", "1"], [:],
            "CURVE: cannot read server public key from /nowhere/server.pub"
        ),
        ("ridectl", ["keys", "add", "/nowhere", "fleet"], [:], "/nowhere is not a key directory (no server.pub)"),
        ("ridectl", ["up", "--listen-all"], [:], "--listen-all opens the bus and the device ingest to other machines: add --secure"),
        ("ridectl", ["up"], ["RIDE_LISTEN_ALL": "1"], "--listen-all opens the bus and the device ingest to other machines: add --secure"),
        ("ride-gateway", [], ["RIDE_INSECURE_BUS": "sure"], "RIDE_INSECURE_BUS 'sure' must be 1 or 0"),
        ("ride-gateway", ["--print", "yaml"], [:], "The value 'yaml' is invalid for '--print <print>'"),
        (
            "ridectl",
            ["bench-devices", "--ingest", "tcp://127.0.0.1:1", "--devices", "1", "--rate", "1", "--seconds", "1", "--redis", "host"],
            [:], "--redis must be HOST:PORT (a port from 1 to 65535), not 'host'"
        ),
        (
            "ridectl",
            ["bench-devices", "--ingest", "tcp://127.0.0.1:1", "--devices", "1", "--rate", "1", "--seconds", "1", "--redis", "h:0"],
            [:], "--redis must be HOST:PORT (a port from 1 to 65535), not 'h:0'"
        ),
        (
            "ridectl", ["contract", "--bin-dir", "/nonexistent/bin"], [:],
            "cannot run /nonexistent/bin/ride-gateway (build it, or pass --bin-dir)"
        ),
    ])
    func malformedSettingsExit64NamingTheSetting(executable: String, arguments: [String], environment: [String: String], message: String)
        async throws
    {
        let (status, _, err) = try await runCommand(
            "\(Binaries.directory)/\(executable)", arguments + (executable == "ridectl" ? [] : ["--check"]),
            // 33 debug binaries starting at once while the suite loads two cores (seen: over 60 s).
            environment: environment, timeout: .seconds(180))
        #expect(status == 64, "\(executable) \(arguments): \(err)")
        #expect(err.contains(message), "\(err)")
    }
}
