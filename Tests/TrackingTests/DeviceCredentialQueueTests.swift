import Bus
import Foundation
import Logging
import RideModels
import Synchronization
import Testing

@testable import TrackingService

/// Unknown devices' credentials are asked about in one users call per interval, and a full queue
/// is refused at once without any call.
@Suite struct DeviceCredentialQueueTests {
    /// Users as the queue sees it: every credential "good-…" holds; how many calls, of how many pairs.
    final class CountingUsers: DeviceCredentialVerifier {
        let calls = Mutex<[Int]>([])

        func verdicts(_ pairs: [CredentialPair]) async throws -> [Result<CredentialHolder, ServiceError>] {
            calls.withLock { $0.append(pairs.count) }
            return pairs.map {
                $0.credential.hasPrefix("good-")
                    ? .success(CredentialHolder(driver: "driver-of-\($0.deviceID)"))
                    : .failure(.unauthorized("credential_invalid", "not ours"))
            }
        }
    }

    /// What the waiting batches were told, by device.
    final class Answers: Sendable {
        let outcomes = Mutex<[String: [Result<CredentialHolder, ServiceError>]]>([:])
        func completion(for deviceID: String) -> DeviceCredentialQueue.Completion {
            { outcome in self.outcomes.withLock { $0[deviceID, default: []].append(outcome) } }
        }
        var count: Int { outcomes.withLock { $0.values.map(\.count).reduce(0, +) } }
    }

    let logger = Logger(label: "credential-queue-test")
    let now = Date(timeIntervalSince1970: 1_800_000_000)

    func queue(_ users: CountingUsers, capacity: Int = 2048, interval: Duration = .milliseconds(50)) -> DeviceCredentialQueue {
        DeviceCredentialQueue(check: DeviceCredentialCheck(verifier: users, logger: logger), interval: interval, capacity: capacity)
    }

    @Test func manyUnknownDevicesAreAskedAboutInOneCall() async {
        let users = CountingUsers()
        let queue = queue(users)
        let answers = Answers()
        for i in 0..<100 {
            queue.submit(
                CredentialPair(deviceID: "d-\(i)", credential: i == 7 ? "forged" : "good-\(i)"),
                completion: answers.completion(for: "d-\(i)"))
        }
        // A second batch of a device already waiting shares its question.
        queue.submit(CredentialPair(deviceID: "d-1", credential: "good-1"), completion: answers.completion(for: "d-1"))
        #expect(users.calls.withLock { $0 }.isEmpty, "nothing is asked before the interval ends")
        await queue.flush(now: now)
        #expect(users.calls.withLock { $0 } == [100], "one call for 100 devices")
        #expect(answers.count == 101)
        #expect(
            answers.outcomes.withLock { $0["d-1"] } == [
                .success(CredentialHolder(driver: "driver-of-d-1")), .success(CredentialHolder(driver: "driver-of-d-1")),
            ])
        #expect(
            answers.outcomes.withLock { $0["d-7"] }?.first.map { if case .failure(let error) = $0 { error.code } else { "" } }
                == "credential_invalid")
        // The verdicts are kept: the same devices cost users nothing for the recheck interval.
        #expect(
            queue.check.recent(deviceID: "d-3", credential: "good-3", now: now + 1) == .success(CredentialHolder(driver: "driver-of-d-3")))
    }

    @Test func aBacklogBeyondOneCallWaitsForTheNextInterval() async {
        let users = CountingUsers()
        let queue = queue(users)
        let answers = Answers()
        let many = VerifyDeviceCredentialsParams.maximumPairs + 10
        for i in 0..<many {
            queue.submit(CredentialPair(deviceID: "d-\(i)", credential: "good-\(i)"), completion: answers.completion(for: "d-\(i)"))
        }
        await queue.flush(now: now)
        #expect(users.calls.withLock { $0 } == [VerifyDeviceCredentialsParams.maximumPairs])
        #expect(queue.waiting == 10)
        await queue.flush(now: now)
        #expect(users.calls.withLock { $0 } == [VerifyDeviceCredentialsParams.maximumPairs, 10])
        #expect(answers.count == many)
    }

    @Test func aFullQueueIsRefusedAtOnceWithoutACall() async {
        let users = CountingUsers()
        let queue = queue(users, capacity: 3)
        let answers = Answers()
        for i in 0..<5 {
            queue.submit(CredentialPair(deviceID: "d-\(i)", credential: "good-\(i)"), completion: answers.completion(for: "d-\(i)"))
        }
        let refused = answers.outcomes.withLock { $0 }
        #expect(refused.keys.sorted() == ["d-3", "d-4"], "refused at once, before any call")
        for outcome in refused.values.flatMap({ $0 }) {
            guard case .failure(let error) = outcome else {
                Issue.record("a full queue took a batch")
                continue
            }
            #expect(error.status == 503 && error.code == "credential_unchecked" && error.message.contains("busy"), "\(error)")
        }
        #expect(users.calls.withLock { $0 }.isEmpty, "no call made for the refused ones")
        #expect(queue.waiting == 3)
    }

    @Test func runningItAsksOncePerIntervalHoweverManyArrive() async throws {
        let users = CountingUsers()
        let queue = queue(users, interval: .milliseconds(100))
        let answers = Answers()
        let running = Task { try await queue.run() }
        let started = ContinuousClock.now
        for i in 0..<400 {
            queue.submit(CredentialPair(deviceID: "d-\(i)", credential: "good-\(i)"), completion: answers.completion(for: "d-\(i)"))
            if i % 40 == 0 { try await Task.sleep(for: .milliseconds(20)) }
        }
        while answers.count < 400, ContinuousClock.now - started < .seconds(10) { try await Task.sleep(for: .milliseconds(20)) }
        let elapsed = ContinuousClock.now - started
        running.cancel()
        _ = try? await running.value
        #expect(answers.count == 400)
        let calls = users.calls.withLock { $0 }
        // At most one call per interval (and one for the last pairs): never one per device.
        #expect(calls.count <= Int(elapsed / .milliseconds(100)) + 1, "\(calls.count) calls in \(elapsed)")
        #expect(calls.reduce(0, +) == 400)
    }
}
