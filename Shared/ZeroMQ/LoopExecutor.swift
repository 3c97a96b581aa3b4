import Synchronization

/// A task executor whose jobs run on a socket-owning thread, between its polls.
///
/// A worker's I/O thread receives a request and starts the handler as a task preferring this
/// executor: the handler's code then runs on the same thread that will send its reply, with no
/// thread hand-offs (each costs a wake-up: tens of microseconds on a busy 2-core machine). A handler
/// that awaits something elsewhere (a database thread, another service) resumes here through
/// `enqueue`, which wakes the loop. Like an event loop: handlers must not block.
public final class LoopExecutor: TaskExecutor, Sendable {
    private let jobs = Mutex<[UnownedJob]>([])
    private let waker: Waker

    /// `waker` is the loop's: enqueueing from another thread makes its poll return.
    public init(waker: Waker) { self.waker = waker }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        jobs.withLock { $0.append(job) }
        waker.wake()
    }

    /// Whether jobs are waiting (the loop then polls without blocking).
    public var hasJobs: Bool { jobs.withLock { !$0.isEmpty } }

    /// Runs the jobs queued so far, on the calling thread (the loop's). Jobs they enqueue run next time.
    public func runQueuedJobs() {
        let batch = jobs.withLock { queued -> [UnownedJob] in
            defer { queued.removeAll(keepingCapacity: true) }
            return queued
        }
        for job in batch {
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }
}
