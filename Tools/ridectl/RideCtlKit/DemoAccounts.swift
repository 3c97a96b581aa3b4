import Foundation
import PlatformLauncher
import Wire

/// The rider and the driver `ridectl up` signs up through the gateway, so the web apps
/// (`/app/rider`, `/app/driver`) can be tried at once. Development only: the passwords are
/// printed in the banner; `--no-demo-accounts` leaves them out.
enum DemoAccounts {
    struct Account {
        var role: String
        var name: String
        var phone: String
        var password: String
        var extra: JSONValue = [:]
    }

    static let rider = Account(role: "rider", name: "Demo Rider", phone: "+358400000001", password: "demo-rider")
    static let driver = Account(
        role: "driver", name: "Demo Driver", phone: "+358400000002", password: "demo-driver",
        extra: ["device_id": "demo-driver-phone", "car": ["make": "Toyota", "model": "Prius", "license_plate": "DEMO-1", "color": "white"]])

    /// Signs both up (an account already there is fine); the problem, if any, in words.
    static func signUp(gateway: String) async -> String? {
        for account in [rider, driver] {
            var body: [String: JSONValue] = [
                "role": .string(account.role), "name": .string(account.name), "phone_number": .string(account.phone), "password": .string(account.password),
            ]
            body.merge(account.extra.objectValue ?? [:]) { _, extra in extra }
            do {
                let reply = try await HTTPProbe.send(
                    "POST", "\(gateway)/v1/users", headers: ["Content-Type": "application/json"], body: try JSONCoding.encode(JSONValue.object(body)), timeout: .seconds(10))
                guard reply.status == 201 || reply.status == 200 || reply.status == 409 else {
                    return "the demo \(account.role) was refused \(reply.status): \(String(decoding: reply.body.prefix(300), as: UTF8.self))"
                }
            } catch {
                return "the demo \(account.role) could not sign up: \(error)"
            }
        }
        return nil
    }

    static func banner(gateway: String) -> String {
        """
          \(gateway)/app/rider     the rider app: demo rider \(rider.phone), password \(rider.password)
          \(gateway)/app/driver    the driver app: demo driver \(driver.phone), password \(driver.password)
        """
    }
}
