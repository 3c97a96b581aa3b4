import Foundation
import Synchronization

/// Runs `operation`, giving up after `timeout`: the operation is cancelled and `nil` returned, so a
/// server that hangs costs the caller at most `timeout`. The caller does not wait for the
/// cancelled operation to wind down (a pool still trying to connect may take seconds to notice).
func withDeadline<T: Sendable>(_ timeout: Duration, _ operation: @escaping @Sendable () async throws -> T) async throws -> T? {
    let race = DeadlineRace<T>()
    return try await withTaskCancellationHandler {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T?, any Error>) in
            race.start(
                continuation,
                work: Task {
                    do { race.finish(.success(try await operation())) } catch { race.finish(.failure(error)) }
                },
                timer: Task {
                    guard (try? await Task.sleep(for: timeout)) != nil else { return }
                    race.finish(.success(nil))
                })
        }
    } onCancel: {
        race.cancel()
    }
}

/// The operation against the timer: the first to finish answers, the other is cancelled.
private final class DeadlineRace<T: Sendable>: Sendable {
    private struct State {
        var continuation: CheckedContinuation<T?, any Error>?
        var early: Result<T?, any Error>?
        var tasks: [Task<Void, Never>] = []
        var cancelled = false
    }
    private let state = Mutex(State())

    func start(_ continuation: CheckedContinuation<T?, any Error>, work: Task<Void, Never>, timer: Task<Void, Never>) {
        let (early, cancelled) = state.withLock { state -> (Result<T?, any Error>?, Bool) in
            state.tasks = [work, timer]
            if state.early == nil { state.continuation = continuation }
            return (state.early, state.cancelled)
        }
        if cancelled || early != nil { [work, timer].forEach { $0.cancel() } }
        if let early { continuation.resume(with: early) }
    }

    func finish(_ result: Result<T?, any Error>) {
        let (continuation, tasks) = state.withLock { state -> (CheckedContinuation<T?, any Error>?, [Task<Void, Never>]) in
            guard state.early == nil else { return (nil, []) }
            state.early = result
            defer { state.continuation = nil }
            return (state.continuation, state.tasks)
        }
        tasks.forEach { $0.cancel() }
        continuation?.resume(with: result)
    }

    func cancel() {
        let tasks = state.withLock { state in
            state.cancelled = true
            return state.tasks
        }
        tasks.forEach { $0.cancel() }
    }
}
