import Bus
import Foundation
import GRDB
import RideModels
import Storage
import Testing

@testable import UsersService

@Suite struct PasswordHasherTests {
    let hasher = PasswordHasher(rounds: 1000)

    @Test func aHashVerifiesItsPasswordOnly() throws {
        let stored = try hasher.hash("correct horse")
        #expect(stored.hasPrefix("pbkdf2-sha256$1000$"))
        #expect(!stored.contains("correct horse"))
        #expect(hasher.verify("correct horse", against: stored))
        #expect(!hasher.verify("correct horsE", against: stored))
        #expect(!hasher.verify("", against: stored))
    }

    @Test func saltsDifferAndRoundsTravelWithTheHash() throws {
        #expect(try hasher.hash("same password") != (try hasher.hash("same password")))
        let old = try PasswordHasher(rounds: 2000).hash("pw123456")
        #expect(hasher.verify("pw123456", against: old), "verifies with the rounds stored in the hash")
    }

    @Test func malformedStoredValuesNeverVerify() {
        for stored in [
            "", "plain", "pbkdf2-sha256$0$AA==$AA==", "pbkdf2-sha256$x$AA==$AA==", "md5$1$AA==$AA==", "pbkdf2-sha256$10$!!$AA==",
        ] {
            #expect(!hasher.verify("anything", against: stored), "\(stored)")
        }
    }
}

@Suite struct UserRulesTests {
    func register(
        _ role: UserRole = .rider, name: String = "Ann", phone: String = "+380501234567", password: String = "secret123",
        device: String? = nil, car: Car? = nil
    ) -> RegisterParams {
        RegisterParams(role: role, name: name, phoneNumber: phone, password: password, deviceID: device, car: car)
    }

    /// What the users service refuses: the type's `@WireField` rules (checked as params are
    /// decoded), then the rules between fields.
    func problem(with params: RegisterParams) -> String? { params.ruleViolation ?? UserRules.problem(with: params) }
    func problem(with params: UpdateUserParams, role: UserRole) -> String? {
        params.ruleViolation ?? UserRules.problem(with: params, role: role)
    }

    @Test func goodRegistrations() {
        #expect(problem(with: register()) == nil)
        #expect(problem(with: register(.driver, device: "phone-1", car: Car(model: "Prius", licensePlate: "AB 1234"))) == nil)
    }

    @Test func eachBadFieldIsNamed() {
        let cases: [(RegisterParams, String)] = [
            (register(name: "  "), "name:"), (register(name: String(repeating: "x", count: 101)), "name:"),
            (register(name: "a\u{7}b"), "name:"),
            (register(phone: "0501234567"), "phone_number:"), (register(phone: "+0501234567"), "phone_number:"),
            (register(phone: "+12"), "phone_number:"),
            (register(phone: "+38050123456a"), "phone_number:"), (register(phone: "+３８０５０１２３４５６７"), "phone_number:"),
            (register(password: "short"), "password:"),
            (register(.driver, car: Car(model: "Prius", licensePlate: "AB 1234")), "device_id:"),
            (register(.driver, device: "phone-1"), "car:"),
            (register(.driver, device: "has space", car: Car(model: "Prius", licensePlate: "AB")), "device_id:"),
            (register(.driver, device: "p", car: Car(model: "", licensePlate: "AB")), "car.model:"),
        ]
        for (params, field) in cases {
            #expect(problem(with: params)?.hasPrefix(field) == true, "\(params) → \(problem(with: params) ?? "nil")")
        }
    }

    @Test func updatesAreCheckedToo() {
        #expect(problem(with: UpdateUserParams(id: "r-1", name: "Bob"), role: .rider) == nil)
        #expect(
            problem(with: UpdateUserParams(id: "r-1", car: Car(model: "X", licensePlate: "Y")), role: .rider)
                == "car: only drivers have a car")
        #expect(problem(with: UpdateUserParams(id: "r-1", password: "1234"), role: .rider)?.hasPrefix("password:") == true)
    }

    /// What a stolen token could take the account with needs re-authentication; the rest does not.
    @Test func aNewPasswordOrPhoneNumberNeedsTheCurrentPassword() {
        let ann = User(id: "r-1", role: .rider, name: "Ann", phoneNumber: "+380501234567", createdAt: Date())
        #expect(UpdateUserParams(id: "r-1", password: "new-secret").needsCurrentPassword(of: ann))
        #expect(UpdateUserParams(id: "r-1", phoneNumber: "+380509999999").needsCurrentPassword(of: ann))
        #expect(!UpdateUserParams(id: "r-1", phoneNumber: ann.phoneNumber).needsCurrentPassword(of: ann), "the same number is no change")
        #expect(!UpdateUserParams(id: "r-1", name: "Ann S", deviceID: "ann-phone").needsCurrentPassword(of: ann))
    }
}
