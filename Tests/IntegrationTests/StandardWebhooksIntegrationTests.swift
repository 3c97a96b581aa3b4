import Bus
import Foundation
import PlatformLauncher
import ServiceKit
import TestProcess
import Testing
import Wire

/// Real deliveries of `ride-notifications` checked by the reference Standard Webhooks verifier
/// (`standardwebhooks` on PyPI) in a Python receiver: signed, retried under one webhook-id, signed
/// with both secrets during a rotation and with the new one only after it; a replayed, forged,
/// expired or malformed request refused by the receiver. The events are trips' own: notifications
/// delivers an event only as its publisher's log has it, so a stand-in publisher would not do.
/// Deliveries are awaited 30 s: under `make test`'s load the Python receiver can take seconds to answer.
@Suite(.serialized) struct StandardWebhooksIntegrationTests {
    @Test func deliveriesVerifyWithTheReferenceThroughARotation() async throws {
        try await withTestBus("standard-webhooks") { bus in
            let receiver = try await WebhookReceiver.start(in: bus.scratch, name: "receiver", secrets: [:], failures: 1)
            defer { receiver.stop() }
            let notifications = try await TestService.start(
                on: bus, service: "notifications", executable: "ride-notifications",
                arguments: ["--webhook-retries", "0.3,0.3", "--webhook-timeout-s", "5"])
            let registered = try await notifications.call("register_webhook", #"{"url":"\#(receiver.url)"}"#)
            #expect(registered.status == 201, "\(registered.body)")
            guard let id = registered.body["id"]?.stringValue, let first = registered.body["secret"]?.stringValue else {
                throw TestFailure("\(registered.body)")
            }
            #expect(first.hasPrefix("whsec_"), "a new secret follows the convention")
            try receiver.trust(["first": first])

            _ = try await TestTracking.start(on: bus)  // trips asks it where the device is
            let trips = try await TestService.trips(on: bus)
            /// A trip made by trips, whose `trip.created` notifications delivers; its id.
            func publish() async throws -> String {
                let made = try await trips.call(
                    "create", #"{"device_id":"phone-1","destination":{"geometry":{"type":"Point","coordinates":[24.94,60.17]}}}"#)
                guard made.status == 201, let trip = made.body["trip_id"]?.stringValue else {
                    throw TestFailure("trips.create: \(made.status) \(made.body)")
                }
                return trip
            }
            @Sendable func accepted(_ trip: String) -> JSONValue? {
                receiver.requests.first { $0["status"] == 200 && $0["body"]?[0]?["data"]?["trip_id"] == .string(trip) }
            }

            // One secret: the first attempt fails (500), the retry verifies, under the same webhook-id.
            let t1 = try await publish()
            try await eventually("t1 delivered", timeout: .seconds(30)) { accepted(t1) != nil }
            let t1Requests = receiver.requests.filter { $0["body"]?[0]?["data"]?["trip_id"] == .string(t1) }
            #expect(t1Requests.compactMap { $0["status"]?.numberValue } == [500, 200], "\(t1Requests)")
            #expect(
                Set(t1Requests.compactMap { $0["delivery"]?.stringValue }).count == 1, "one webhook-id for both attempts: \(t1Requests)")
            #expect(t1Requests.allSatisfy { $0["verified"] == ["first": true] })

            // A rotation: every delivery verifies with the old secret and with the new one.
            let rotated = try await notifications.call("rotate_webhook_secret", #"{"id":"\#(id)","keep_previous_s":3600}"#)
            #expect(rotated.status == 200, "\(rotated.body)")
            guard let second = rotated.body["secret"]?.stringValue else { throw TestFailure("\(rotated.body)") }
            #expect(second != first && second.hasPrefix("whsec_"))
            #expect(rotated.body["previous_secret_expires_at"]?.stringValue != nil)
            try receiver.trust(["first": first, "second": second])
            let t2 = try await publish()
            try await eventually("t2 delivered", timeout: .seconds(30)) { accepted(t2) != nil }
            #expect(accepted(t2)?["verified"] == ["first": true, "second": true], "signed with both: \(accepted(t2) ?? .null)")
            #expect(accepted(t2)?["signature"]?.stringValue?.split(separator: " ").count == 2)

            // No secret at rest (issue 38): the webhooks table keeps them sealed, and so does the
            // requests table a keyed registration's reply; the ops still answer them open.
            let keyed = #"{"url":"\#(receiver.url)","request_id":"register-keyed-1"}"#
            let third = try await notifications.call("register_webhook", keyed)
            let thirdAgain = try await notifications.call("register_webhook", keyed)
            let thirdSecret = try #require(third.body["secret"]?.stringValue, "\(third.body)")
            #expect(thirdAgain.body == third.body, "a retry opens the sealed reply")
            let listed = try await notifications.call("list_webhooks", "{}")
            #expect(listed.body["webhooks"]?.arrayValue?.first { $0["id"] == .string(id) }?["secret"] == .string(second), "\(listed.body)")
            #expect(try await notifications.call("delete_webhook", #"{"id":"\#(third.body["id"]?.stringValue ?? "")"}"#).status == 200)
            let files = try FileManager.default.contentsOfDirectory(atPath: "\(bus.dataRoot)/notifications").filter {
                $0.hasPrefix("notifications.sqlite")
            }
            #expect(!files.isEmpty)
            for file in files {
                let bytes = try Data(contentsOf: URL(fileURLWithPath: "\(bus.dataRoot)/notifications/\(file)"))
                for secret in [first, second, thirdSecret] {
                    #expect(bytes.range(of: Data(secret.utf8)) == nil, "\(file) holds a webhook secret in plain text")
                }
            }

            // What a receiver refuses, and keeps nothing of: the same delivery again, a forged body,
            // an old timestamp, a signature that is not one.
            guard let t2Request = accepted(t2), let raw = t2Request["raw"]?.stringValue else { throw TestFailure("no t2") }
            let (delivery, timestamp, signature) = (
                t2Request["delivery"]?.stringValue, t2Request["timestamp"]?.stringValue, t2Request["signature"]?.stringValue
            )
            let refusals: [(String, HTTPProbe.Response)] = [
                ("replayed", try await receiver.post(body: raw, id: delivery, timestamp: timestamp, signature: signature)),
                (
                    "invalid_signature",
                    try await receiver.post(
                        body: raw.replacingOccurrences(of: t2, with: "t9"), id: delivery, timestamp: timestamp, signature: signature)
                ),
                (
                    "expired",
                    try await receiver.post(
                        body: raw, id: delivery, timestamp: String(Int(Date().timeIntervalSince1970) - 600), signature: signature)
                ),
                ("malformed", try await receiver.post(body: raw, id: "msg_x", timestamp: timestamp, signature: "v1")),
                ("missing_headers", try await receiver.post(body: raw, id: nil, timestamp: nil, signature: nil)),
            ]
            for (reason, response) in refusals {
                #expect(response.status == 401, "\(reason): \(response.status)")
                #expect(try JSONCoding.decode(JSONValue.self, from: Array(response.body))["reason"] == .string(reason))
            }
            #expect(receiver.requests.filter { $0["status"] == 200 }.count == 2, "nothing refused was accepted")

            // Refused by the service: malformed secrets and limits, unknown webhooks (422, 404, never a 5xx).
            for (op, params, status) in [
                ("rotate_webhook_secret", #"{"id":"\#(id)","secret":"whsec_!!"}"#, 422),
                ("rotate_webhook_secret", #"{"id":"\#(id)","keep_previous_s":-1}"#, 422),
                ("rotate_webhook_secret", #"{"id":"wh-nobody"}"#, 404), ("drop_previous_secret", #"{"id":"wh-nobody"}"#, 404),
                ("register_webhook", #"{"url":"\#(receiver.url)","secret":"whsec_AAEC"}"#, 422),
                ("rotate_webhook_secret", #"{"id":7}"#, 422),
            ] {
                let answer = try await notifications.call(op, params)
                #expect(answer.status == status, "\(op) \(params): \(answer.status) \(answer.body)")
            }

            // The rotation ends: the new secret only.
            let dropped = try await notifications.call("drop_previous_secret", #"{"id":"\#(id)"}"#)
            #expect(dropped.status == 200 && [nil, .null].contains(dropped.body["previous_secret_expires_at"]), "\(dropped.body)")
            let t3 = try await publish()
            try await eventually("t3 delivered", timeout: .seconds(30)) { accepted(t3) != nil }
            #expect(accepted(t3)?["verified"] == ["first": false, "second": true])

            // A graceful stop closes the pooled client with the rest.
            #expect(await bus.supervisor.stop(notifications.name, grace: .seconds(10)) == 0, "\(notifications.log.suffix(2000))")
            #expect(notifications.log.contains("notifications stopped"))
        }
    }

    /// Deliveries and probes go through async-http-client: nothing links FoundationNetworking,
    /// which is what needed libcurl in the image (deploy/Dockerfile installs none).
    @Test(arguments: ["ride-notifications", "ridectl", "ride-gateway"])
    func theExecutablesNeedNoLibcurl(executable: String) async throws {
        let libraries = try await TestProcess.output("/usr/bin/ldd", ["\(Binaries.directory)/\(executable)"])
        #expect(!libraries.contains("libcurl") && !libraries.contains("FoundationNetworking"), "\(libraries)")
    }
}
