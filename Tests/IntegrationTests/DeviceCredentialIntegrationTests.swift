import Bus
import Foundation
import Geo
import RideModels
import Testing
import TrackingSDK
import Wire

/// Devices are who they say, through the real processes (`ride-users`, `ride-tracking` requiring
/// device credentials, `ride-gateway`): a driver's log-in gives their phone a credential bound to
/// the device; the ingest socket refuses a phone without it, with another device's, or with a
/// forged one, storing nothing; logging out or a new password revokes it.
@Suite(.serialized) struct DeviceCredentialIntegrationTests {
    static let center = GeoPoint(latitude: 47.8359, longitude: 35.1146)
    static let phone = "+380671110099"

    func logIn(_ gateway: TestGateway, password: String) async throws -> (token: String, credential: String) {
        let session = try await gateway.request("POST", "/v1/sessions", #"{"phone_number":"\#(Self.phone)","password":"\#(password)"}"#)
        guard let token = session.body["token"]?.stringValue, let credential = session.body["device_credential"]?.stringValue else {
            throw TestFailure("log-in: \(session)")
        }
        return (token, credential)
    }

    func phone(_ id: String, _ tracking: TestTracking, runtime: DeviceRuntime, credential: String?) throws -> TrackingDevice {
        var configuration = tracking.sdkConfiguration()
        configuration.deviceCredential = credential
        let device = try TrackingDevice(id: id, configuration: configuration, provider: SimulatedDrive(at: Self.center), runtime: runtime)
        device.startTracking()
        return device
    }

    func lastSeen(_ tracking: TestTracking, _ deviceID: String) async throws -> (status: Int, seen: Date?) {
        let reply = try await tracking.callRaw("device", json: #"{"device_id":"\#(deviceID)"}"#)
        guard reply.isSuccess else { return (reply.status, nil) }
        return (reply.status, try JSONCoding.decode(DeviceInfo.self, from: reply.json).lastSeen)
    }

    @Test func onlyThePhoneHoldingItsDriversCredentialStreamsAndLoggingOutOrANewPasswordStopsIt() async throws {
        try await withTestBus("device-credentials") { bus in
            _ = try await TestService.users(on: bus)
            let tracking = try await TestTracking.start(
                on: bus, deviceCredentials: true, arguments: ["--device-credential-recheck-s", "1"])
            let gateway = try await TestGateway.start(on: bus)
            let signUp = try await gateway.request(
                "POST", "/v1/users",
                #"{"role":"driver","name":"Dan","phone_number":"\#(Self.phone)","password":"driving9","device_id":"dc-dan-phone","car":{"model":"Prius","license_plate":"AB 1234"}}"#
            )
            #expect(signUp.status == 201)
            let first = try await logIn(gateway, password: "driving9")
            #expect(first.credential.hasPrefix("dc1."))
            let runtime = DeviceRuntime()

            // Without a credential, with Dan's credential on another device, and with a forged one:
            // refused, nothing stored for either device.
            let bare = try phone("dc-dan-phone", tracking, runtime: runtime, credential: nil)
            let impostor = try phone("dc-eve-phone", tracking, runtime: runtime, credential: first.credential)
            let forged = try phone(
                "dc-mallory-phone", tracking, runtime: runtime, credential: String(first.credential.dropLast(4)) + "AAAA")
            try await eventually("three phones refused") {
                [bare, impostor, forged].allSatisfy { $0.errors.contains(.invalidDeviceCredential) } && impostor.statistics.resends >= 1
            }
            for id in ["dc-dan-phone", "dc-eve-phone", "dc-mallory-phone"] {
                #expect(try await lastSeen(tracking, id).status == 404, "\(id)")
            }
            await impostor.close()
            await forged.close()
            // Logged once per device and minute, however often the phone sends again.
            let refusals = tracking.log.components(separatedBy: "\n").filter {
                $0.contains("device credential refused") && $0.contains("dc-eve-phone")
            }
            #expect(refusals.count == 1, "\(refusals)")

            // The credential given at log-in: the waiting batch goes at once, and the phone streams.
            bare.deviceCredential = first.credential
            try await eventually("Dan's phone streams") { try await lastSeen(tracking, "dc-dan-phone").seen != nil }
            #expect(!bare.errors.contains(.invalidDeviceCredential))

            // Log out: within the recheck (1 s here), the phone is refused and nothing more is stored.
            #expect(try await gateway.request("POST", "/v1/auth/logout", token: first.token).status == 200)
            try await eventually("the logged-out phone is refused") { bare.errors.contains(.invalidDeviceCredential) }
            let stopped = try await lastSeen(tracking, "dc-dan-phone").seen
            try await Task.sleep(for: .seconds(2))
            #expect(try await lastSeen(tracking, "dc-dan-phone").seen == stopped)

            // Log in again: streaming again. A new password revokes that session too.
            let second = try await logIn(gateway, password: "driving9")
            bare.deviceCredential = second.credential
            try await eventually("streaming after logging in again") {
                let seen = try await lastSeen(tracking, "dc-dan-phone").seen ?? .distantPast
                return !bare.errors.contains(.invalidDeviceCredential) && seen > (stopped ?? .distantPast)
            }
            #expect(
                try await gateway.request(
                    "PATCH", "/v1/me", token: second.token, #"{"password":"another-secret","current_password":"driving9"}"#
                ).status == 200)
            try await eventually("the phone is refused after a new password") { bare.errors.contains(.invalidDeviceCredential) }
            await bare.close()
        }
    }

    @Test func usersAnswersWhyACredentialDoesNotHold() async throws {
        try await withTestBus("device-credential-ops") { bus in
            let users = try await TestService.users(on: bus)
            let registered = try await users.call(
                "register",
                #"{"role":"driver","name":"Eve","phone_number":"+380671110098","password":"driving9","device_id":"dc-eve","car":{"model":"Prius","license_plate":"AB 1235"}}"#
            )
            let id = try #require(registered.body["id"]?.stringValue)
            let issued = try await users.call("issue_device_credential", #"{"id":"\#(id)"}"#)
            let credential = try #require(issued.body["credential"]?.stringValue)
            #expect(issued.body["device_id"]?.stringValue == "dc-eve")
            let good = try await users.call("verify_device_credential", #"{"device_id":"dc-eve","credential":"\#(credential)"}"#)
            #expect(good.status == 200 && good.body["user_id"]?.stringValue == id)
            for (device, presented, code) in [
                ("dc-other", credential, "credential_invalid"), ("dc-eve", "dc1.nonsense", "credential_invalid"),
                ("dc-eve", "", "credential_invalid"),
            ] {
                let reply = try await users.call("verify_device_credential", #"{"device_id":"\#(device)","credential":"\#(presented)"}"#)
                #expect(reply.status == 401 && reply.body["error"]?["code"]?.stringValue == code, "\(device) \(presented): \(reply)")
            }
            // Many pairs in one call: a verdict per pair, in order.
            let batched = try await users.call(
                "verify_device_credentials",
                #"{"pairs":[{"device_id":"dc-eve","credential":"\#(credential)"},{"device_id":"dc-other","credential":"\#(credential)"}]}"#)
            #expect(batched.status == 200, "\(batched)")
            #expect(batched.body["verdicts"]?[0]?["user_id"]?.stringValue == id && batched.body["verdicts"]?[0]?["refusal"] == nil)
            #expect(
                batched.body["verdicts"]?[1]?["device_id"] == "dc-other"
                    && batched.body["verdicts"]?[1]?["refusal"]?["error"]?["code"] == "credential_invalid")
            #expect(try await users.call("verify_device_credentials", #"{"pairs":[]}"#).status == 422, "at least one pair")
            // The account names another device: the old device's credential is revoked.
            #expect(try await users.call("update", #"{"id":"\#(id)","device_id":"dc-eve-new"}"#).status == 200)
            let moved = try await users.call("verify_device_credential", #"{"device_id":"dc-eve","credential":"\#(credential)"}"#)
            #expect(moved.status == 401 && moved.body["error"]?["code"]?.stringValue == "credential_revoked")
            let rider = try await users.call(
                "register", #"{"role":"rider","name":"Ann","phone_number":"+380501110098","password":"secret123"}"#)
            let riderID = try #require(rider.body["id"]?.stringValue)
            #expect(try await users.call("issue_device_credential", #"{"id":"\#(riderID)"}"#).status == 409)
        }
    }
}
