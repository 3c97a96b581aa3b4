import Bus
import Foundation
import Geo
import PlatformLauncher
import RideModels
import Testing
import TrackingSDK
import Wire
import ZeroMQ

/// The device ingest under attack, through the real processes (`ride-users`, `ride-tracking`
/// requiring device credentials) and peers in Python: a stranger presenting a driver's device id
/// gets nothing of the device's; a flood of unknown devices costs users one call per interval; an
/// oversized frame is never decoded; a connection sending too fast is refused.
@Suite(.serialized, .timeLimit(.minutes(4))) struct IngestDefenceIntegrationTests {
    static let center = GeoPoint(latitude: 47.8359, longitude: 35.1146)

    /// A driver whose account names `deviceID`, and the credential of a session of theirs.
    func driver(_ users: TestService, deviceID: String, phone: String) async throws -> String {
        let registered = try await users.call(
            "register",
            #"{"role":"driver","name":"Dan","phone_number":"\#(phone)","password":"driving9","device_id":"\#(deviceID)","car":{"model":"Prius","license_plate":"AB 1234"}}"#
        )
        let id = try #require(registered.body["id"]?.stringValue, "\(registered)")
        let issued = try await users.call("issue_device_credential", #"{"id":"\#(id)"}"#)
        return try #require(issued.body["credential"]?.stringValue, "\(issued)")
    }

    /// Calls users has answered that verify device credentials, one pair or many (its /metrics).
    func credentialCalls(_ users: TestService) async throws -> Double {
        let text = try await HTTPProbe.get("http://\(users.host.address):\(users.httpPort)/metrics").text
        return text.split(separator: "\n")
            .filter { $0.hasPrefix("ride_op_duration_seconds_count{") && $0.contains(#"op="verify_device_credential"#) }
            .compactMap { Double($0.split(separator: " ").last!) }.reduce(0, +)
    }

    @Test func aStrangerWithADriversDeviceIDGetsNoneOfItsCommandsOrAcksAndTheDeviceStreamsOn() async throws {
        try await IngestPeers.requirePyzmq()
        try await withTestBus("ingest-hijack") { bus in
            let users = try await TestService.users(on: bus)
            let tracking = try await TestTracking.start(on: bus, deviceCredentials: true)
            var configuration = tracking.sdkConfiguration()
            configuration.deviceCredential = try await driver(users, deviceID: "dan-phone", phone: "+380671110201")
            let device = try TrackingDevice(
                id: "dan-phone", configuration: configuration, provider: FixedLocation(Self.center), runtime: DeviceRuntime())
            device.isAvailable = true
            device.startTracking()
            try await eventually("the driver's phone streams") { device.statistics.acknowledged >= 3 }
            let publisher = try await EventPublisher(endpoint: bus.ingress, source: "notifications", logger: testLogger)
            #expect(await publisher.waitForSubscriber(to: "device.command.dan-phone"))

            let attack = Task { try await IngestPeers.run(IngestPeers.hijacker, [tracking.ingest, "dan-phone", "8"]) }
            try await Task.sleep(for: .seconds(1))
            let acknowledgedBefore = device.statistics.acknowledged
            // The platform's commands reach the phone while the stranger holds "dan-phone" as routing id.
            // A command is fire-and-forget (PUB/SUB): under load one can be lost on its way, so each is
            // sent again until the phone obeys (a repeated command changes nothing).
            for command in [DeviceCommand.stopTracking, .startTracking, .stopTracking, .startTracking] {
                let obeyed: @Sendable () -> Bool = { device.isTracking == (command == .startTracking) }
                for _ in 0..<5 where !obeyed() {
                    try publisher.publish(
                        topic: "device.command.dan-phone", type: "device.command",
                        data: DeviceCommandEvent(command: command, issuedAt: Date()))
                    try? await eventually("the phone obeys \(command.rawValue)", timeout: .seconds(4)) { obeyed() }
                }
                #expect(obeyed(), "the phone obeys \(command.rawValue)")
            }
            let report = try await attack.value
            #expect(report.sent >= 20, "\(report)")
            #expect(report.command == 0, "the stranger got the device's commands: \(report)")
            #expect(report.ack == 0, "the stranger's batches were taken: \(report)")
            #expect(Set(report.errors.keys).isSubset(of: ["credential_invalid", "credential_required"]), "\(report)")
            #expect(device.statistics.acknowledged >= acknowledgedBefore + 10, "the phone's batches were acked all along")
            #expect(!device.errors.contains(.invalidDeviceCredential))

            // Nothing of the stranger's stored: every location is the phone's.
            let history = try await tracking.call(
                "locations", LocationsParams(deviceID: "dan-phone", limit: 10_000), as: LocationHistory.self)
            #expect(!history.locations.isEmpty && history.locations.allSatisfy { abs($0.latitude - Self.center.latitude) < 0.01 })
            #expect(
                try await tracking.call("device", DeviceParams(deviceID: "dan-phone"), as: DeviceInfo.self).available,
                "the stranger's intents were not taken")
            await publisher.close()
            await device.close()
        }
    }

    @Test func aFloodOfUnknownDevicesCostsUsersOneCallPerIntervalAndStoresNothing() async throws {
        try await IngestPeers.requirePyzmq()
        try await withTestBus("ingest-flood") { bus in
            let users = try await TestService.users(on: bus)
            let tracking = try await TestTracking.start(on: bus, deviceCredentials: true)
            let callsBefore = try await credentialCalls(users)
            let report = try await IngestPeers.run(IngestPeers.flooder, [tracking.ingest, "20", "30"])
            #expect(report.sent == 600)
            #expect(report.ack == 0, "\(report)")
            #expect(report.errors.values.reduce(0, +) == 600, "every batch answered: \(report)")
            #expect(Set(report.errors.keys).isSubset(of: ["credential_invalid", "credential_unchecked"]), "\(report)")
            let calls = try await credentialCalls(users) - callsBefore
            // One call per 50 ms interval at most (and one for the last pairs), never one per device.
            #expect(calls >= 1 && calls <= report.seconds / 0.05 + 2, "\(calls) users calls for 600 unknown devices in \(report.seconds) s")
            #expect(calls <= 60, "\(calls) users calls for 600 unknown devices")
            #expect(try await tracking.health()["details"]?["devices"] == 0, "nothing stored")
        }
    }

    @Test func anOversizedBatchIsRefusedBeforeDecodingAndAHugeFrameIsDroppedUnread() async throws {
        try await withTestBus("ingest-oversize") { bus in
            let tracking = try await TestTracking.start(on: bus)
            // Over the batch limit (1000 items: 577,536 bytes) and not JSON: decoded, it would be invalid_batch.
            let tooBig = String(repeating: "x", count: 600_000)
            let reply = try IngestProbe.exchange(endpoint: tracking.ingest, routingID: nil, frames: ["batch", tooBig])
            #expect(reply.first == "error")
            let body = try JSONCoding.decode(JSONValue.self, from: Array(reply.last!.utf8))
            #expect(body["error"]?["code"] == "batch_too_large", "\(reply)")
            #expect(body["error"]?["message"]?.stringValue?.contains("nothing of it was read") == true, "\(reply)")

            // Past ZMQ_MAXMSGSIZE (twice the limit): libzmq drops the connection; no answer comes.
            let socket = try Socket(.dealer)
            defer { socket.close() }
            try socket.setReceiveTimeout(milliseconds: 2000)
            try socket.connect(tracking.ingest)
            try socket.send(message: [Frame(frame: "batch"), Frame(repeating: UInt8(ascii: "x"), count: 1_300_000)])
            // A receive that times out throws EAGAIN.
            let answer = try? socket.receive()
            #expect(answer == nil, "a huge frame is not answered: it was never read")

            // The service goes on; nothing was stored.
            let good = #"{"publishable_key":"pk_test","device_id":"after-huge","batch_id":1,"locations":[]}"#
            #expect(try IngestProbe.exchange(endpoint: tracking.ingest, routingID: nil, frames: ["batch", good]).first == "ack")
            #expect(try await tracking.health()["details"]?["devices"] == 1)
            #expect(try await tracking.metric("ride_tracking_refused_batches_total") >= 1)
        }
    }

    @Test func aConnectionSendingTooFastIsRateLimitedAndNothingOfTheRefusedIsStored() async throws {
        try await withTestBus("ingest-rate") { bus in
            let tracking = try await TestTracking.start(on: bus)
            let socket = try Socket(.dealer)
            defer { socket.close() }
            try socket.setReceiveTimeout(milliseconds: 10_000)
            try socket.setSendHighWaterMark(0)
            try socket.connect(tracking.ingest)
            let start = Date()
            for id in 1...300 {
                let at = RFC3339.format(start.addingTimeInterval(Double(id) / 1000 - 1))
                let batch =
                    #"{"publishable_key":"pk_test","device_id":"fast-phone","batch_id":\#(id),"locations":[{"latitude":47.8,"longitude":35.1,"recorded_at":"\#(at)"}]}"#
                try socket.send(message: [Frame(frame: "batch"), Frame(frame: batch)])
            }
            var acks = 0
            var limited = 0
            for _ in 1...300 {
                guard let reply = try socket.receive() else { throw TestFailure("an answer is missing (\(acks) acks, \(limited) limited)") }
                if reply[0] == Frame(frame: "ack") {
                    acks += 1
                } else {
                    let body = try JSONCoding.decode(JSONValue.self, from: reply[1])
                    #expect(body["error"]?["code"] == "rate_limited", "\(body)")
                    limited += 1
                }
            }
            let seconds = Date().timeIntervalSince(start)
            // 40 at once, 20 a second after: far fewer than 300.
            #expect(acks >= 40 && Double(acks) <= 40 + 20 * seconds + 5, "\(acks) acked in \(seconds) s")
            #expect(limited == 300 - acks && limited >= 100)
            let history = try await tracking.call(
                "locations", LocationsParams(deviceID: "fast-phone", limit: 10_000), as: LocationHistory.self)
            #expect(history.locations.count == acks, "only the acked batches stored")
            #expect(try await tracking.metric("ride_tracking_refused_batches_total") >= Double(limited))
            // Another connection has its own allowance.
            let other = #"{"publishable_key":"pk_test","device_id":"calm-phone","batch_id":1,"locations":[]}"#
            #expect(try IngestProbe.exchange(endpoint: tracking.ingest, routingID: nil, frames: ["batch", other]).first == "ack")
            #expect(
                tracking.log.components(separatedBy: "\n").filter { $0.contains("rate_limited") }.count <= 2,
                "logged once per connection and minute")
        }
    }
}
