import PostgresNIO
import Synchronization

/// `body`'s answer, or 503 `storage_unavailable` once `limit` passes without one — given even if
/// `body` ignores its cancellation (a query stuck on a dead connection), so that a caller that must
/// go on (a loop handling events one by one) is never held for good by one store call.
/// `expired` runs when the deadline, not `body`, decided. Each of `abandoned` answers the call at
/// once the same way (its pool replaced, its connection closed under it).
public func withStorageDeadline<Result: Sendable>(
    _ limit: Duration, abandoned: [AbandonedCalls] = [], expired: @escaping @Sendable () -> Void = {},
    _ body: @escaping @Sendable () async throws -> Result
) async throws -> Result {
    let decided = FirstClaim()
    return try await withCheckedThrowingContinuation { continuation in
        let work = Mutex<Task<Void, Never>?>(nil)
        let registrations = abandoned.map { calls in
            calls.register {
                if decided.claim() {
                    work.withLock { $0?.cancel() }
                    continuation.resume(throwing: PostgresSchema.unanswered)
                }
            }
        }
        work.withLock {
            $0 = Task {
                defer { for (calls, registration) in zip(abandoned, registrations) { calls.forget(registration) } }
                do {
                    let result = try await body()
                    if decided.claim() { continuation.resume(returning: result) }
                } catch {
                    if decided.claim() { continuation.resume(throwing: error) }
                }
            }
        }
        Task {
            try? await Task.sleep(for: limit)
            if decided.claim() {
                work.withLock { $0?.cancel() }
                expired()
                continuation.resume(throwing: PostgresSchema.unanswered)
            }
        }
    }
}

/// True for the first caller only: which of two racers resumes a continuation.
final class FirstClaim: Sendable {
    private let claimed = Mutex(false)
    func claim() -> Bool {
        claimed.withLock { claimed in
            defer { claimed = true }
            return !claimed
        }
    }
}

/// The calls under way on each pooled connection, answered at once when the connection closes
/// under them. A query sent on a connection the server has ended (a transaction idle longer than
/// `idle_in_transaction_session_timeout` in a starved process, a terminated backend) was seen to
/// wait for the call's whole deadline: postgres-nio knows the connection closed, but the query
/// gets no answer.
final class ConnectionCalls: Sendable {
    private let open = Mutex<[ObjectIdentifier: AbandonedCalls]>([:])

    /// The calls of `connection`, watched from its first lease to its close.
    func calls(on connection: PostgresConnection) -> AbandonedCalls {
        let key = ObjectIdentifier(connection)
        let (calls, isNew) = open.withLock { open -> (AbandonedCalls, Bool) in
            if let calls = open[key] { return (calls, false) }
            let calls = AbandonedCalls()
            open[key] = calls
            return (calls, true)
        }
        if isNew {
            connection.closeFuture.whenComplete { _ in
                _ = self.open.withLock { $0.removeValue(forKey: key) }
                calls.abandonAll()
            }
        }
        return calls
    }
}
