import Foundation
import Synchronization

/// Runs `operation`, giving up after `timeout`: `nil` is returned then and the operation is
/// cancelled, so a server that hangs costs the caller at most `timeout`. The operation runs in a
/// task of its own, not a child: a client that does not heed cancellation at once (a connection
/// pool still retrying a dead server) cannot hold the caller past the deadline, as a task group —
/// which waits for all its children — would.
func withDeadline<T: Sendable>(_ timeout: Duration, _ operation: @escaping @Sendable () async throws -> T) async throws -> T? {
    let answer = Answer<T>()
    return try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T?, any Error>) in
        answer.wait(with: continuation)
        let work = Task {
            do { answer.give(.success(try await operation())) } catch { answer.give(.failure(error)) }
        }
        Task {
            try? await Task.sleep(for: timeout)
            if answer.give(.success(nil)) { work.cancel() }
        }
    }
}

/// The first answer of a race, given once to the waiting continuation.
private final class Answer<T: Sendable>: Sendable {
    private let continuation = Mutex<CheckedContinuation<T?, any Error>?>(nil)

    func wait(with continuation: CheckedContinuation<T?, any Error>) { self.continuation.withLock { $0 = continuation } }

    /// Whether this was the first answer (later ones are dropped).
    @discardableResult
    func give(_ result: Result<T?, any Error>) -> Bool {
        guard
            let waiting = continuation.withLock({ value -> CheckedContinuation<T?, any Error>? in
                defer { value = nil }
                return value
            })
        else { return false }
        waiting.resume(with: result)
        return true
    }
}
