import CLinux
import Foundation
import Synchronization

/// A dedicated OS thread for code that blocks in libzmq.
///
/// Blocking calls (`zmq_poll`, `zmq_recv`) must never run on Swift's cooperative pool: it has one
/// thread per core (two here), so one blocked call stalls every task. Each socket-owning loop runs
/// on an `OwnedThread` instead, and async code waits for its end with `join()`.
public final class OwnedThread: Sendable {
    private let completion = Completion()
    public let name: String

    /// How the thread competes for a CPU with the process's other threads.
    public enum Priority: Sendable {
        case normal
        /// For work that is queued and acknowledged in batches (ingest, history writes): when the
        /// CPU is short it yields to latency-bound threads such as a service's request handler,
        /// and only waits a little longer itself. Nice value +5 on Linux.
        case throughput
    }

    public init(name: String, priority: Priority = .normal, body: @escaping @Sendable () -> Void) {
        self.name = name
        let completion = self.completion
        let thread = Thread {
            // Name the OS thread (Linux: at most 15 bytes), so `top -H`, perf and gdb say whose it is;
            // otherwise it inherits the name of whichever pool thread created it.
            ride_name_current_thread(Self.threadName(name))
            if priority == .throughput { ride_lower_current_thread_priority(5) }
            body()
            completion.finish()
        }
        thread.name = name
        thread.stackSize = 1 << 20
        thread.start()
    }

    /// `name` cut to Linux's 15 bytes without splitting a character.
    static func threadName(_ name: String) -> String {
        var cut = ""
        for character in name where cut.utf8.count + character.utf8.count <= 15 { cut.append(character) }
        return cut
    }

    /// Waits, without blocking a thread, until the body has returned.
    public func join() async {
        await completion.wait()
    }

    /// Blocks the calling thread until the body has returned (for threads that are not async, and tests).
    public func joinBlocking() {
        completion.waitBlocking()
    }

    public var isFinished: Bool { completion.isFinished }
}

/// A one-shot "done" flag that async and blocking callers can wait for.
final class Completion: Sendable {
    private struct State {
        var done = false
        var waiters: [CheckedContinuation<Void, Never>] = []
    }
    private let state = Mutex(State())
    private let condition = NSCondition()

    var isFinished: Bool { state.withLock { $0.done } }

    func finish() {
        let waiters = state.withLock { state in
            state.done = true
            defer { state.waiters = [] }
            return state.waiters
        }
        waiters.forEach { $0.resume() }
        condition.lock()
        condition.broadcast()
        condition.unlock()
    }

    func wait() async {
        await withCheckedContinuation { continuation in
            let alreadyDone = state.withLock { state in
                if !state.done { state.waiters.append(continuation) }
                return state.done
            }
            if alreadyDone { continuation.resume() }
        }
    }

    func waitBlocking() {
        condition.lock()
        while !isFinished { _ = condition.wait(until: Date().addingTimeInterval(0.05)) }
        condition.unlock()
    }
}

extension OwnedThread {
    /// Starts a socket loop on its own thread and waits until it reports that its sockets are set up.
    ///
    /// `body` creates its sockets, binds/connects them, then calls `ready` once with the outcome
    /// (a bind failure such as "Address already in use" reaches the caller here) and goes on with its
    /// loop. If `body` returns without calling `ready`, the start fails.
    public static func start<Value: Sendable>(
        name: String,
        priority: Priority = .normal,
        _ body: @escaping @Sendable (_ ready: @escaping @Sendable (Result<Value, any Error>) -> Void) -> Void
    ) async throws -> (OwnedThread, Value) {
        let once = Mutex<CheckedContinuation<Value, any Error>?>(nil)
        let report: @Sendable (Result<Value, any Error>) -> Void = { result in
            once.withLock { continuation in
                continuation?.resume(with: result)
                continuation = nil
            }
        }
        let threadBox = Mutex<OwnedThread?>(nil)
        let value = try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Value, any Error>) in
            once.withLock { $0 = continuation }
            let thread = OwnedThread(name: name, priority: priority) {
                body(report)
                report(.failure(StartError(name: name)))
            }
            threadBox.withLock { $0 = thread }
        }
        return (threadBox.withLock { $0! }, value)
    }

    struct StartError: Error, CustomStringConvertible {
        let name: String
        var description: String { "\(name) stopped before it was ready" }
    }
}

/// A flag a socket loop checks each turn; set from any thread. A class, so a loop's closure can
/// share it before its owner is fully initialised.
public final class StopFlag: Sendable {
    private let flag = Atomic<Bool>(false)
    public init() {}
    public func request() { flag.store(true, ordering: .sequentiallyConsistent) }
    public var isRequested: Bool { flag.load(ordering: .relaxed) }
}
