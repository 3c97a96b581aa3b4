import Bus
import Foundation
import Logging
import Synchronization
import Testing

@testable import TrackingService

@Suite struct DeviceCredentialCheckTests {
    /// Users as the check sees it: an answer per credential, and how often it was asked.
    final class FakeUsers: DeviceCredentialVerifier {
        let answers = Mutex<[String: Result<CredentialHolder, ServiceError>]>([:])
        let down = Mutex(false)
        let asked = Mutex(0)

        func verdicts(_ pairs: [CredentialPair]) async throws -> [Result<CredentialHolder, ServiceError>] {
            asked.withLock { $0 += 1 }
            if down.withLock({ $0 }) { throw ServiceError(status: Status.unavailable, code: "unavailable", message: "users is away") }
            return answers.withLock { answers in
                pairs.map { answers[$0.credential] ?? .failure(.unauthorized("credential_invalid", "not ours")) }
            }
        }
    }

    let logger = Logger(label: "credential-check-test")

    func code(_ outcome: Result<CredentialHolder, ServiceError>?) -> String? {
        if case .failure(let error)? = outcome { return error.code }
        return nil
    }
    let start = Date(timeIntervalSince1970: 1_800_000_000)

    @Test func aVerdictIsKeptForTheRecheckIntervalThenAskedAgain() async {
        let users = FakeUsers()
        users.answers.withLock { $0["good"] = .success(CredentialHolder(driver: "d-1")) }
        let check = DeviceCredentialCheck(verifier: users, recheckAfter: 60, logger: logger)
        #expect(check.recent(deviceID: "p", credential: "good", now: start) == nil)
        #expect(await check.check(deviceID: "p", credential: "good", now: start) == .success(CredentialHolder(driver: "d-1")))
        #expect(check.recent(deviceID: "p", credential: "good", now: start + 59) == .success(CredentialHolder(driver: "d-1")))
        // Another credential for the device is asked about, not taken for the known one.
        #expect(check.recent(deviceID: "p", credential: "other", now: start + 1) == nil)
        #expect(check.recent(deviceID: "p", credential: "good", now: start + 61) == nil)
        users.answers.withLock { $0["good"] = .failure(.unauthorized("credential_revoked", "logged out")) }
        #expect(
            await check.check(deviceID: "p", credential: "good", now: start + 61)
                == .failure(.unauthorized("credential_revoked", "logged out")))
        #expect(users.asked.withLock { $0 } == 2)
    }

    @Test func withoutACredentialABatchIsRefusedWithoutAskingUsers() async {
        let users = FakeUsers()
        let check = DeviceCredentialCheck(verifier: users, logger: logger)
        #expect(code(check.recent(deviceID: "p", credential: nil, now: start)) == "credential_required")
        #expect(code(await check.check(deviceID: "p", credential: nil, now: start)) == "credential_required")
        #expect(users.asked.withLock { $0 } == 0)
    }

    @Test func aRefusalIsKeptBrieflySoAPhoneResendingItCostsUsersNothing() async {
        let users = FakeUsers()
        let check = DeviceCredentialCheck(verifier: users, refusalKeptFor: 10, logger: logger)
        #expect(code(await check.check(deviceID: "p", credential: "forged", now: start)) == "credential_invalid")
        #expect(code(check.recent(deviceID: "p", credential: "forged", now: start + 9)) == "credential_invalid")
        #expect(check.recent(deviceID: "p", credential: "forged", now: start + 11) == nil)
        #expect(users.asked.withLock { $0 } == 1)
    }

    @Test func whileUsersIsAwayARecentlyCheckedCredentialIsBelievedAndANewOneWaits() async {
        let users = FakeUsers()
        users.answers.withLock { $0["good"] = .success(CredentialHolder(driver: "d-1")) }
        let check = DeviceCredentialCheck(verifier: users, recheckAfter: 60, trustedWhileUnchecked: 600, logger: logger)
        _ = await check.check(deviceID: "p", credential: "good", now: start)
        users.down.withLock { $0 = true }
        #expect(await check.check(deviceID: "p", credential: "good", now: start + 120) == .success(CredentialHolder(driver: "d-1")))
        #expect(code(await check.check(deviceID: "p", credential: "good", now: start + 601)) == "credential_unchecked")
        #expect(code(await check.check(deviceID: "q", credential: "good", now: start)) == "credential_unchecked")
    }

    @Test func aStrangersBadCredentialDoesNotUnsettleTheDevicesOwn() async {
        let users = FakeUsers()
        users.answers.withLock { $0["good"] = .success(CredentialHolder(driver: "d-1")) }
        let check = DeviceCredentialCheck(verifier: users, recheckAfter: 60, logger: logger)
        _ = await check.check(deviceID: "p", credential: "good", now: start)
        #expect(code(await check.check(deviceID: "p", credential: "forged", now: start + 1)) == "credential_invalid")
        #expect(
            check.recent(deviceID: "p", credential: "good", now: start + 2) == .success(CredentialHolder(driver: "d-1")),
            "the device's own verdict stays")
        #expect(code(check.recent(deviceID: "p", credential: "forged", now: start + 2)) == "credential_invalid")
        #expect(users.asked.withLock { $0 } == 2)
    }

    @Test func aRevokedCredentialIsNotBelievedWhileUsersIsAway() async {
        let users = FakeUsers()
        users.answers.withLock { $0["good"] = .success(CredentialHolder(driver: "d-1")) }
        let check = DeviceCredentialCheck(verifier: users, recheckAfter: 60, trustedWhileUnchecked: 600, refusalKeptFor: 10, logger: logger)
        _ = await check.check(deviceID: "p", credential: "good", now: start)
        users.answers.withLock { $0["good"] = .failure(.unauthorized("credential_revoked", "logged out")) }
        #expect(code(await check.check(deviceID: "p", credential: "good", now: start + 61)) == "credential_revoked")
        users.down.withLock { $0 = true }
        #expect(code(await check.check(deviceID: "p", credential: "good", now: start + 120)) == "credential_unchecked")
    }
}
