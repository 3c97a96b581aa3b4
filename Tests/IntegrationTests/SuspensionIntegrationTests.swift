import Foundation
import Testing
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
            let nobody = try await gateway.request("POST", "/dashboard/users/d-0000000000000000/suspend", #"{"reason":"x"}"#, headers: Self.basic)
            #expect(nobody.status == 404, "\(nobody.body)")
            #expect(try await gateway.request("GET", "/v1/me", token: apps.driver.token).status == 200, "nothing changed yet")

            let suspended = try await gateway.request("POST", "/dashboard/users/\(dan)/suspend", #"{"reason":"insurance expired"}"#, headers: Self.basic)
            #expect(suspended.status == 200 && suspended.body["suspension_reason"] == "insurance expired", "\(suspended.body)")
            #expect(suspended.body["suspended_at"]?.stringValue != nil, "\(suspended.body)")
            let retried = try await gateway.request("POST", "/dashboard/users/\(dan)/suspend", #"{"reason":"insurance expired"}"#, headers: Self.basic)
            #expect(retried.status == 200 && retried.body == suspended.body, "a retry changes nothing: \(retried.body)")

            // At once: his token, his log-in, his refresh, his phone's credential.
            #expect(try await gateway.request("GET", "/v1/me", token: apps.driver.token).status == 401)
            let logIn = try await gateway.request("POST", "/v1/sessions", Self.danLogIn)
            #expect(logIn.status == 403 && logIn.body["error"]?["code"] == "account_suspended", "\(logIn.body)")
            #expect(logIn.body["error"]?["message"]?.stringValue?.contains("insurance expired") == true, "\(logIn.body)")
            let refresh = try await gateway.request("POST", "/v1/auth/refresh", #"{"refresh_token":"\#(session.body["refresh_token"]?.stringValue ?? "")"}"#)
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
