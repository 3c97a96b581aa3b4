import Synchronization

/// A task executor whose jobs run on a socket-owning thread, between its polls.
///
/// A worker's I/O thread receives a request and starts the handler as a task preferring this
/// executor: the handler's code then runs on the same thread that will send its reply, with no
/// thread hand-offs (each costs a wake-up: tens of microseconds on a busy 2-core machine). A handler
/// that awaits something elsewhere (a database thread, another service) resumes here through
/// `enqueue`, which wakes the loop. Like an event loop: handlers must not block.
///
/// When its loop ends, `shutDown()` hands every queued and later job to the global concurrent
/// executor, so a task that still prefers this executor finishes instead of waiting for ever.
public final class LoopExecutor: TaskExecutor, Sendable {
    private struct State {
        var jobs: [UnownedJob] = []
        var isShutDown = false
    }

    private let state = Mutex(State())
    private let waker: Waker

    /// `waker` is the loop's: enqueueing from another thread makes its poll return.
    public init(waker: Waker) { self.waker = waker }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let queued = state.withLock { state -> Bool in
            if state.isShutDown { return false }
            state.jobs.append(job)
            return true
        }
        if queued {
            waker.wake()
        } else {
            globalConcurrentExecutor.enqueue(ExecutorJob(job))
        }
    }

    /// Whether jobs are waiting (the loop then polls without blocking).
    public var hasJobs: Bool { state.withLock { !$0.jobs.isEmpty } }

    /// Runs the jobs queued so far, on the calling thread (the loop's). Jobs they enqueue run next time.
    public func runQueuedJobs() {
        let batch = state.withLock { state -> [UnownedJob] in
            defer { state.jobs.removeAll(keepingCapacity: true) }
            return state.jobs
        }
        for job in batch {
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }

    /// The loop has ended: what is queued, and whatever comes later, runs on the global executor.
    public func shutDown() {
        let leftover = state.withLock { state -> [UnownedJob] in
            state.isShutDown = true
            defer { state.jobs = [] }
            return state.jobs
        }
        for job in leftover { globalConcurrentExecutor.enqueue(ExecutorJob(job)) }
    }
}
