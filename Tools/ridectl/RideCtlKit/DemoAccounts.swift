import Foundation
import PlatformLauncher
import RideModels
import Wire

/// The rider and the driver `ridectl up` signs up through the gateway, so the web apps
/// (`/app/rider`, `/app/driver`) can be tried at once. Development only: the passwords are
/// printed in the banner; `--no-demo-accounts` leaves them out.
enum DemoAccounts {
    static let rider = RegisterParams(role: .rider, name: "Demo Rider", phoneNumber: "+358400000001", password: "demo-rider")
    static let driver = RegisterParams(
        role: .driver, name: "Demo Driver", phoneNumber: "+358400000002", password: "demo-driver", deviceID: "demo-driver-phone",
        car: Car(model: "Prius", licensePlate: "DEMO-1", make: "Toyota", color: "white"))

    /// Signs both up (an account already there is fine); the problem, if any, in words.
    static func signUp(gateway: String) async -> String? {
        for account in [rider, driver] {
            do {
                let reply = try await HTTPProbe.send(
                    "POST", "\(gateway)/v1/users", headers: ["Content-Type": "application/json"], body: try JSONCoding.encode(account),
                    timeout: .seconds(10))
                guard reply.status == 201 || reply.status == 200 || reply.status == 409 else {
                    return
                        "the demo \(account.role.rawValue) was refused \(reply.status): \(String(decoding: reply.body.prefix(300), as: UTF8.self))"
                }
            } catch {
                return "the demo \(account.role.rawValue) could not sign up: \(error)"
            }
        }
        return nil
    }

    static func banner(gateway: String) -> String {
        """
          \(gateway)/app/rider     the rider app: demo rider \(rider.phoneNumber), password \(rider.password)
          \(gateway)/app/driver    the driver app: demo driver \(driver.phoneNumber), password \(driver.password)
        """
    }
}
