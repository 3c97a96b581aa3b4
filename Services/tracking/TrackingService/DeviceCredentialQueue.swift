import Bus
import Foundation
import RideModels
import ServiceLifecycle
import Synchronization

/// Where batches from devices without a recent verdict wait for users: once per `interval`, ONE
/// call (`users.verify_device_credentials`) asks about every waiting (device, credential) pair, up
/// to `VerifyDeviceCredentialsParams.maximumPairs`; the rest wait for the next. However many
/// unknown devices send, users hears at most one call per interval from this process, no task is
/// made per batch, and past `capacity` waiting batches a new one is refused at once (503
/// `credential_unchecked`; the SDK sends it again on its backoff).
public final class DeviceCredentialQueue: Service, Sendable {
    public typealias Completion = @Sendable (Result<CredentialHolder, ServiceError>) -> Void

    public let check: DeviceCredentialCheck
    public let interval: Duration
    private let pending: Mutex<PendingCredentialChecks<Completion>>
    private let calls = Mutex<UInt64>(0)

    public init(check: DeviceCredentialCheck, interval: Duration = .milliseconds(50), capacity: Int = 2048) {
        self.check = check
        self.interval = interval
        pending = Mutex(PendingCredentialChecks(capacity: capacity))
    }

    /// Calls made to users so far.
    public var callsMade: UInt64 { calls.withLock { $0 } }

    /// Batches waiting now.
    public var waiting: Int { pending.withLock { $0.count } }

    /// Queues a batch for the next call; `completion` gets the driver or the refusal then. Refused
    /// at once, without asking anyone, when the queue is full.
    public func submit(_ pair: CredentialPair, completion: @escaping Completion) {
        guard pending.withLock({ $0.add(pair, completion) }) else {
            completion(.failure(DeviceCredentialCheck.unchecked(pair.deviceID, why: "tracking is checking too many devices at once: busy")))
            return
        }
    }

    /// Asks users about the oldest waiting pairs in one call and answers their batches.
    public func flush(now: Date) async {
        let taken = pending.withLock { $0.take(atMost: VerifyDeviceCredentialsParams.maximumPairs) }
        guard !taken.isEmpty else { return }
        calls.withLock { $0 += 1 }
        let outcomes = await check.check(taken.map(\.pair), now: now)
        for (question, outcome) in zip(taken, outcomes) {
            for completion in question.waiters { completion(outcome) }
        }
    }

    /// One flush per interval until the service stops; what still waits then is refused (sent again).
    public func run() async throws {
        while !Task.isCancelled && !Task.isShuttingDownGracefully {
            try? await Task.sleep(for: interval)
            await flush(now: Date())
        }
        let left = pending.withLock { $0.take(atMost: .max) }
        for question in left {
            for completion in question.waiters {
                completion(.failure(DeviceCredentialCheck.unchecked(question.pair.deviceID, why: "tracking is stopping")))
            }
        }
    }
}
