import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Wakes a socket-owning thread that is blocked in `zmq_poll`, from any thread.
///
/// A non-blocking pipe whose read end the owner polls next to its sockets. `isPending` keeps a burst of
/// wakes down to one write: only the first wake after a drain touches the pipe. A wake from the owner
/// thread itself is a no-op (once `claimOwnership()` was called): it is awake, and checks its queues
/// before it sleeps.
public final class Waker: Sendable {
    /// Poll this descriptor (`Poller.add(fileDescriptor:)`).
    public let fileDescriptor: Int32
    private let writeEnd: Int32
    private let isPending = Atomic<Bool>(false)
    private let owner = Atomic<UInt>(0)

    public init() {
        var fds: [Int32] = [0, 0]
        // pipe(2) fails only when the process is out of descriptors: nothing can run then.
        precondition(pipe(&fds) == 0, "pipe() failed: cannot create a waker")
        for fd in fds {
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        }
        fileDescriptor = fds[0]
        writeEnd = fds[1]
    }

    deinit {
        close(fileDescriptor)
        close(writeEnd)
    }

    /// Records the calling thread as the owner: its own wakes are skipped from now on. The owner
    /// must check its queues before every poll that could block.
    public func claimOwnership() {
        owner.store(Self.currentThreadID(), ordering: .releasing)
    }

    private var calledByOwner: Bool {
        owner.load(ordering: .acquiring) == Self.currentThreadID()
    }

    private static func currentThreadID() -> UInt {
        #if canImport(Darwin)
        UInt(bitPattern: pthread_self())
        #else
        UInt(pthread_self())
        #endif
    }

    /// Makes the owner's next (or current) poll return. Safe from any thread, cheap when repeated.
    public func wake() {
        if calledByOwner { return }
        guard !isPending.exchange(true, ordering: .acquiringAndReleasing) else { return }
        var byte: UInt8 = 1
        _ = write(writeEnd, &byte, 1)
    }

    /// Called by the owner after its poll saw the descriptor readable (or before looking at its mailbox).
    ///
    /// Reads the pipe first and only then clears `isPending`: the other order could let a wake land
    /// between the two, whose byte the read would swallow while leaving `isPending` set — and every
    /// later wake would then skip its write, leaving the owner asleep.
    public func drain() {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 64) { buffer in
            while read(fileDescriptor, buffer.baseAddress, buffer.count) > 0 {}
        }
        isPending.store(false, ordering: .sequentiallyConsistent)
    }
}

/// A queue from any thread to one socket-owning thread, with the `Waker` that tells it to look.
public final class Mailbox<Item: Sendable>: Sendable {
    private let items = Mutex<[Item]>([])
    public let waker = Waker()

    public init() {}

    /// Queues `item` and wakes the owner.
    public func post(_ item: Item) {
        items.withLock { $0.append(item) }
        waker.wake()
    }

    /// Queues several items with one wake.
    public func post(contentsOf newItems: some Sequence<Item>) {
        items.withLock { $0.append(contentsOf: newItems) }
        waker.wake()
    }

    /// Whether nothing is queued (the owner then may block in its poll).
    public var isEmpty: Bool { items.withLock { $0.isEmpty } }

    /// Everything queued so far, oldest first. The waker is drained first, so an item posted while we
    /// take is either taken now or wakes the owner again: no wake-up is ever lost.
    public func take() -> [Item] {
        waker.drain()
        return items.withLock { queued in
            guard !queued.isEmpty else { return [] }
            defer { queued.removeAll(keepingCapacity: true) }
            return queued
        }
    }
}
