import Foundation
import RideModels
import Testing
import TrackingSDK
import Wire

/// An operator suspends a driver from the dashboard, through the gateway against the real services:
/// his tokens, his live socket and his phone's device credential stop, he cannot log in until
/// reinstated, and nobody else is touched. Only the operator may do it, and only saying why.
@Suite(.serialized) struct SuspensionIntegrationTests {
    static let basic = ["Authorization": "Basic " + Data("ridesharing:sk_dev_ridesharing".utf8).base64EncodedString()]
    static let danLogIn = #"{"phone_number":"+380671110001","password":"driving9"}"#

    @Test func aSuspendedDriverIsShutOutEverywhereUntilReinstated() async throws {
        try await withTestBus("suspension") { bus in
            let apps = try await GatewayIntegrationTests.Apps.start(bus, gateway: ["--socket-recheck-s", "1"])
            let gateway = apps.gateway
            let users = TestService(bus: bus, name: "users", service: "users", executable: "ride-users", arguments: [], httpPort: 0)
            let dan = apps.driver.id
            let session = try await gateway.request("POST", "/v1/sessions", Self.danLogIn)
            let credential = try #require(session.body["device_credential"]?.stringValue, "\(session.body)")
            let verify = #"{"device_id":"\#(apps.deviceID)","credential":"\#(credential)"}"#
            #expect(try await users.call("verify_device_credential", verify).status == 200)
            let live = LiveClient(url: "ws://127.0.0.1:\(gateway.port)/v1/me/live?access_token=\(apps.driver.token)")
            defer { live.close() }
            try await Task.sleep(for: .milliseconds(500))
            #expect(live.ending == "open")

            // Not the rider's to do; not without a reason; not someone who does not exist.
            let byRider = try await gateway.request("POST", "/dashboard/users/\(dan)/suspend", token: apps.rider.token, #"{"reason":"no"}"#)
            #expect(byRider.status == 401, "\(byRider.body)")
            let noReason = try await gateway.request("POST", "/dashboard/users/\(dan)/suspend", #"{}"#, headers: Self.basic)
            #expect(noReason.status == 422, "\(noReason.body)")
            let nobody = try await gateway.request(
                "POST", "/dashboard/users/d-0000000000000000/suspend", #"{"reason":"x"}"#, headers: Self.basic)
            #expect(nobody.status == 404, "\(nobody.body)")
            #expect(try await gateway.request("GET", "/v1/me", token: apps.driver.token).status == 200, "nothing changed yet")

            let suspended = try await gateway.request(
                "POST", "/dashboard/users/\(dan)/suspend", #"{"reason":"insurance expired"}"#, headers: Self.basic)
            #expect(suspended.status == 200 && suspended.body["suspension_reason"] == "insurance expired", "\(suspended.body)")
            #expect(suspended.body["suspended_at"]?.stringValue != nil, "\(suspended.body)")
            let retried = try await gateway.request(
                "POST", "/dashboard/users/\(dan)/suspend", #"{"reason":"insurance expired"}"#, headers: Self.basic)
            #expect(retried.status == 200 && retried.body == suspended.body, "a retry changes nothing: \(retried.body)")

            // At once: his token, his log-in, his refresh, his phone's credential.
            #expect(try await gateway.request("GET", "/v1/me", token: apps.driver.token).status == 401)
            let logIn = try await gateway.request("POST", "/v1/sessions", Self.danLogIn)
            #expect(logIn.status == 403 && logIn.body["error"]?["code"] == "account_suspended", "\(logIn.body)")
            #expect(logIn.body["error"]?["message"]?.stringValue?.contains("insurance expired") == true, "\(logIn.body)")
            let refresh = try await gateway.request(
                "POST", "/v1/auth/refresh", #"{"refresh_token":"\#(session.body["refresh_token"]?.stringValue ?? "")"}"#)
            #expect(refresh.status == 401, "\(refresh.body)")
            let verdict = try await users.call("verify_device_credential", verify)
            #expect(verdict.status == 401 && verdict.body["error"]?["code"] == "credential_revoked", "\(verdict.body)")
            // His live socket ends at its next token check (every second here).
            try await eventually("the socket was closed", timeout: .seconds(10)) { live.ending != "open" }
            // The rider is untouched.
            #expect(try await gateway.request("GET", "/v1/me", token: apps.rider.token).status == 200)

            // Reinstated: he logs in again; the tokens of before stay revoked.
            let reinstated = try await gateway.request("POST", "/dashboard/users/\(dan)/reinstate", headers: Self.basic)
            #expect(reinstated.status == 200 && reinstated.body["suspended_at"] == nil, "\(reinstated.body)")
            let reinstatedAgain = try await gateway.request("POST", "/dashboard/users/\(dan)/reinstate", headers: Self.basic)
            #expect(reinstatedAgain.status == 200 && reinstatedAgain.body == reinstated.body, "\(reinstatedAgain.body)")
            let again = try await gateway.request("POST", "/v1/sessions", Self.danLogIn)
            #expect(again.status == 200, "\(again.body)")
            #expect(try await gateway.request("GET", "/v1/me", token: apps.driver.token).status == 401, "the old token stays revoked")
            #expect(try await gateway.request("GET", "/v1/me", token: again.body["token"]?.stringValue).status == 200)
        }
    }
}

extension SuspensionIntegrationTests {
    /// The suspension reaches what others keep at once (`user.suspended`): another gateway replica
    /// that took the driver's token a moment ago (its cache keeps tokens 30 s) refuses it, his
    /// sockets there close (their token check is 600 s away here), tracking takes his device off
    /// duty and refuses his phone's next batch (its credential check is a minute away). The
    /// rider's socket on the same ride stays open.
    @Test func aSuspensionReachesEveryGatewayTrackingAndSocketsAtOnce() async throws {
        try await withTestBus("suspension-event") { bus in
            _ = try await TestService.users(on: bus)
            let tracking = try await TestTracking.start(on: bus, deviceCredentials: true)
            _ = try await TestService.trips(on: bus)
            _ = try await TestService.orders(on: bus)
            let recheck = ["--socket-recheck-s", "600"]
            let gateway = try await TestGateway.start(on: bus, arguments: recheck)
            let other = try await TestGateway.start(on: bus, arguments: recheck, name: "gateway-2")
            let apps = try await GatewayIntegrationTests.Apps.signUp(gateway)
            let id = try await apps.bookAndAccept()
            let session = try await gateway.request("POST", "/v1/sessions", Self.danLogIn)
            var configuration = tracking.sdkConfiguration()
            configuration.deviceCredential = try #require(session.body["device_credential"]?.stringValue, "\(session.body)")
            let phone = try TrackingDevice(
                id: apps.deviceID, configuration: configuration, provider: FixedLocation(LifecycleIntegrationTests.driverStart),
                runtime: DeviceRuntime())
            phone.isAvailable = true
            phone.startTracking()
            try await eventually("Dan's phone streams") { phone.statistics.acknowledged >= 2 }

            #expect(try await other.request("GET", "/v1/me", token: apps.driver.token).status == 200)
            let live = { (path: String, token: String) in LiveClient(url: "ws://127.0.0.1:\(other.port)\(path)?access_token=\(token)") }
            let (dansRide, annsRide) = (live("/v1/orders/\(id)/live", apps.driver.token), live("/v1/orders/\(id)/live", apps.rider.token))
            let dansInbox = live("/v1/me/live", apps.driver.token)
            try await eventually("the sockets are open") {
                dansRide.statuses == ["PICKING_UP"] && annsRide.statuses == ["PICKING_UP"] && dansInbox.ending == "open"
            }
            #expect(try await tracking.call("device", DeviceParams(deviceID: apps.deviceID), as: DeviceInfo.self).available)

            let suspended = try await gateway.request(
                "POST", "/dashboard/users/\(apps.driver.id)/suspend", #"{"reason":"documents expired"}"#, headers: Self.basic)
            #expect(suspended.status == 200, "\(suspended.body)")
            try await eventually("the other gateway refuses his token", timeout: .seconds(5)) {
                try await other.request("GET", "/v1/me", token: apps.driver.token).status == 401
            }
            try await eventually("his sockets there close", timeout: .seconds(5)) {
                dansRide.ending != "open" && dansInbox.ending != "open"
            }
            for socket in [dansRide, dansInbox] {
                #expect(socket.received.last?["error"]?["code"] == "account_suspended", "\(socket.received.last ?? .null) \(socket.ending)")
            }
            try await eventually("his device is off duty", timeout: .seconds(5)) {
                !(try await tracking.call("device", DeviceParams(deviceID: apps.deviceID), as: DeviceInfo.self).available)
            }
            try await eventually("his phone is refused", timeout: .seconds(10)) { phone.errors.contains(.invalidDeviceCredential) }
            #expect(annsRide.ending == "open", "the rider's socket stays open")
            #expect(
                !annsRide.received.contains { $0["type"] == "account_suspended" || $0["user_id"] != nil }, "nothing of it reaches the rider"
            )
            for socket in [dansRide, annsRide, dansInbox] { socket.close() }
            await phone.close()
        }
    }
}
