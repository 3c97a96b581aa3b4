import AsyncHTTPClient
import Foundation
import NIOSSL
import PlatformLauncher
import Testing
import Wire

/// Pushes in the providers' wire formats: `ride-notifications` with APNs and FCM credentials made
/// as an operator's are, and `ridectl fake-push` standing in for both services (HTTP/2 over TLS,
/// credentials checked, their error answers): a registered token receives its user's every
/// notification; a throttled push is tried again; an unregistered token is removed after its first
/// refusal; a push the service could not take survives the notifications process being killed.
@Suite(.serialized) struct PushIntegrationTests {
    /// A TLS certificate for 127.0.0.1, an APNs `.p8` key and a service account's JSON key, made with openssl.
    struct Credentials {
        let cert: String
        let key: String
        let arguments: [String]

        static let topic = "com.example.rider"

        static func make(in directory: String, port: Int) async throws -> Credentials {
            let (cert, key, p8, rsa, account) = (
                "\(directory)/push-cert.pem", "\(directory)/push-key.pem", "\(directory)/AuthKey.p8", "\(directory)/sa-key.pem",
                "\(directory)/sa.json"
            )
            for arguments in [
                [
                    "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", key, "-out", cert,
                    "-days", "2",
                    "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
                ],
                ["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", p8],
                ["genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", rsa],
            ] {
                let made = try await runCommand("/usr/bin/openssl", arguments)
                guard made.status == 0 else { throw TestFailure("openssl \(arguments[0]): \(made.stderr)") }
            }
            let serviceAccount: JSONValue = [
                "type": "service_account", "project_id": "ride-push-test", "private_key_id": "0123456789abcdef",
                "private_key": .string(try String(contentsOfFile: rsa, encoding: .utf8)),
                "client_email": "push@ride-push-test.iam.gserviceaccount.com",
                "token_uri": .string("https://127.0.0.1:\(port)/token"),
            ]
            try Data(try JSONCoding.encode(serviceAccount)).write(to: URL(fileURLWithPath: account))
            return Credentials(
                cert: cert, key: key,
                arguments: [
                    "--apns-key-file", p8, "--apns-key-id", "KEY1234567", "--apns-team-id", "TEAM123456", "--apns-topic", topic,
                    "--fcm-service-account-file", account,
                ])
        }
    }

    /// The stand-in's own endpoints, reached over TLS with its certificate.
    struct FakePush {
        let base: String
        let client: HTTPClient

        init(base: String, caFile: String) {
            var tls = TLSConfiguration.makeClientConfiguration()
            tls.additionalTrustRoots = [.file(caFile)]
            self.base = base
            self.client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: .init(tlsConfiguration: tls))
        }

        func pushes() async throws -> [JSONValue] {
            let response = try await client.execute(HTTPClientRequest(url: base + "/fake/pushes"), timeout: .seconds(5))
            let body = try await response.body.collect(upTo: 16 << 20)
            return try JSONCoding.decode(JSONValue.self, from: Array(body.readableBytesView))["pushes"]?.arrayValue ?? []
        }

        /// What `token` gets next: `answer` `times` times (every time when nil).
        func answer(_ token: String, _ answer: String, times: Int? = nil) async throws {
            var request = HTTPClientRequest(url: base + "/fake/tokens/" + token)
            request.method = .POST
            request.body = .bytes(Array(#"{"answer":"\#(answer)"\#(times.map { ",\"times\":\($0)" } ?? "")}"#.utf8))
            let response = try await client.execute(request, timeout: .seconds(5))
            guard response.status.code == 200 else { throw TestFailure("fake-push answer for \(token): \(response.status)") }
        }
    }

    @Test(.timeLimit(.minutes(5)))
    func pushesReachTheirServicesAreRetriedSurviveARestartAndDeadTokensGo() async throws {
        try await withTestBus("push") { bus in
            let port = try FreePort.next()
            let credentials = try await Credentials.make(in: bus.scratch, port: port)
            try bus.supervisor.start(
                name: "fake-push", executable: Binaries.ridectl,
                arguments: [
                    "fake-push", "--listen", "127.0.0.1:\(port)", "--tls-cert-file", credentials.cert, "--tls-key-file", credentials.key,
                ] + credentials.arguments)
            let fake = FakePush(base: "https://127.0.0.1:\(port)", caFile: credentials.cert)
            defer { Task { [client = fake.client] in try? await client.shutdown() } }
            try await eventually("the stand-in answers", timeout: .seconds(30)) { (try? await fake.pushes()) != nil }
            let notifications = try await TestService.start(
                on: bus, service: "notifications", executable: "ride-notifications",
                arguments: credentials.arguments + [
                    "--apns-url", fake.base, "--fcm-url", fake.base, "--push-ca-file", credentials.cert, "--push-retries", "2,2,2",
                ])
            let apps = try await GatewayIntegrationTests.Apps.start(bus)
            let (iphone, gone) = (String(repeating: "a1", count: 32), String(repeating: "de", count: 32))
            let android = "fcm-token:" + String(repeating: "AbC_9-", count: 25)
            let stale = "fcm-token:" + String(repeating: "XyZ-0_", count: 25)

            // A token its service would refuse is refused here, naming why; nothing is kept.
            for (body, why) in [
                (#"{"token":"xyz","platform":"apns"}"#, "APNs device token"), (#"{"token":"\#(iphone)","platform":"web"}"#, "platform"),
                (#"{"token":"has spaces in it, which no FCM token has"}"#, "FCM registration token"),
            ] {
                let reply = try await apps.gateway.request("POST", "/v1/notifications/push_tokens", token: apps.rider.token, body)
                #expect(reply.status == 422 && "\(reply.body)".contains(why), "\(body): \(reply)")
            }
            for (token, body) in [
                (apps.rider.token, #"{"token":"\#(iphone)","platform":"apns"}"#),
                (apps.rider.token, #"{"token":"\#(gone)","platform":"apns"}"#),
                (apps.driver.token, #"{"token":"\#(android)"}"#), (apps.driver.token, #"{"token":"\#(stale)","platform":"fcm"}"#),
            ] {
                let reply = try await apps.gateway.request("POST", "/v1/notifications/push_tokens", token: token, body)
                #expect(reply.status == 200, "\(body): \(reply)")
            }
            try await fake.answer(gone, "unregistered")
            try await fake.answer(android, "throttled", times: 1)
            try await fake.answer(iphone, "throttled", times: 1)
            try await fake.answer(stale, "bad_token")

            let id = try await apps.ride()
            @Sendable func inbox(_ token: String) async throws -> [JSONValue] {
                try await apps.gateway.request("GET", "/v1/notifications", token: token).body["notifications"]?.arrayValue ?? []
            }
            @Sendable func sent(_ service: String, to token: String) async throws -> [JSONValue] {
                try await fake.pushes().filter { $0["service"] == .string(service) && $0["token"] == .string(token) && $0["status"] == 200 }
            }
            @Sendable func notificationID(_ push: JSONValue) -> String? {
                (push["payload"]?["notification_id"] ?? push["payload"]?["data"]?["notification_id"])?.stringValue
            }
            // Every notification of the rider's reached the iPhone through APNs, once, as an alert of the app's topic.
            try await eventually("the rider's every notification pushed to APNs", timeout: .seconds(30)) {
                let pushed = Set(try await sent("apns", to: iphone).compactMap(notificationID))
                let kept = try await inbox(apps.rider.token)
                return kept.contains { $0["kind"] == "ride_completed" } && kept.allSatisfy { pushed.contains($0["id"]?.stringValue ?? "") }
            }
            let riderInbox = try await inbox(apps.rider.token)
            let toIPhone = try await sent("apns", to: iphone)
            #expect(toIPhone.count == riderInbox.count, "each once: \(toIPhone.compactMap(notificationID)) for \(riderInbox.count)")
            for push in toIPhone {
                let kept = riderInbox.first { $0["id"] == .string(notificationID(push) ?? "") }
                #expect(push["topic"] == .string(Credentials.topic) && push["push_type"] == "alert", "\(push)")
                #expect(
                    push["payload"]?["aps"]?["alert"]?["title"] == kept?["title"] && push["payload"]?["aps"]?["thread-id"] == .string(id),
                    "\(push)")
            }
            // The iPhone's first push throttled by APNs (429 TooManyRequests) and sent again next.
            let iPhoneTries = try await fake.pushes().filter { $0["token"] == .string(iphone) }
            #expect(
                iPhoneTries.first?["status"] == 429 && iPhoneTries.first?["reason"] == "TooManyRequests", "\(iPhoneTries.first ?? .null)")
            #expect(
                iPhoneTries.dropFirst().first.map(notificationID) == iPhoneTries.first.map(notificationID),
                "the throttled push was the next one sent")
            // The unregistered token was tried once, refused 410, and removed: no later notification went to it.
            let toGone = try await fake.pushes().filter { $0["token"] == .string(gone) }
            #expect(toGone.count == 1 && toGone.first?["status"] == 410 && toGone.first?["reason"] == "Unregistered", "\(toGone)")
            // The driver's FCM token: the first push throttled (429 QUOTA_EXCEEDED), tried again; every notification sent once.
            try await eventually("the driver's every notification pushed to FCM", timeout: .seconds(30)) {
                let pushed = Set(try await sent("fcm", to: android).compactMap(notificationID))
                let kept = try await inbox(apps.driver.token)
                return !kept.isEmpty && kept.allSatisfy { pushed.contains($0["id"]?.stringValue ?? "") }
            }
            let toAndroid = try await fake.pushes().filter { $0["token"] == .string(android) }
            // The FCM token FCM called invalid (400 INVALID_ARGUMENT): tried once, removed.
            let toStale = try await fake.pushes().filter { $0["token"] == .string(stale) }
            #expect(toStale.count == 1 && toStale.first?["status"] == 400 && toStale.first?["reason"] == "INVALID_ARGUMENT", "\(toStale)")
            #expect(toAndroid.first?["status"] == 429 && toAndroid.first?["reason"] == "QUOTA_EXCEEDED", "\(toAndroid.first ?? .null)")
            #expect(
                toAndroid.dropFirst().first.map(notificationID) == toAndroid.first.map(notificationID),
                "the throttled push was the next one sent")
            #expect(
                try await sent("fcm", to: android).allSatisfy { $0["payload"]?["notification"]?["title"]?.stringValue?.isEmpty == false })
            let metrics = try await HTTPProbe.get("http://127.0.0.1:\(notifications.httpPort)/metrics").text
            #expect(
                metrics.split(separator: "\n").contains {
                    $0.hasPrefix("ride_notifications_pushes_total{") && $0.contains(#""dead_token""#) && $0.hasSuffix(" 1")
                },
                "\(metrics.split(separator: "\n").filter { $0.contains("pushes") })")

            // A push the service cannot take right now outlives the process: FCM is down for the
            // driver's next push; the notifications process is killed after the first refusal; started
            // again, it sends the push from its outbox — once — with no new event.
            try await fake.answer(android, "unavailable", times: 2)
            #expect(
                try await apps.gateway.request("POST", "/v1/orders/\(id)/rating", token: apps.rider.token, #"{"stars":5}"#).status == 200)
            let rated = "\(id)/rated/\(apps.driver.id)"
            try await eventually("FCM refused the rating's push", timeout: .seconds(30)) {
                try await fake.pushes().contains { $0["token"] == .string(android) && $0["status"] == 503 && notificationID($0) == rated }
            }
            bus.supervisor.signal(notifications.name, SIGKILL)
            let beforeRestart = try await fake.pushes().count
            #expect(try await sent("fcm", to: android).allSatisfy { notificationID($0) != rated }, "not sent before the kill")
            try await Task.sleep(for: .milliseconds(500))
            try await notifications.startProcess()
            try await eventually("the rating's push sent after the restart", timeout: .seconds(60)) {
                try await fake.pushes().dropFirst(beforeRestart).contains { $0["status"] == 200 && notificationID($0) == rated }
            }
            try await Task.sleep(for: .seconds(3))
            #expect(try await sent("fcm", to: android).filter { notificationID($0) == rated }.count == 1, "sent once")
        }
    }
}
