import CLinux
import CZeroMQ

#if canImport(Glibc)
import Glibc
#endif

/// Waits for many sockets at a cost that does not grow with their number (Linux epoll over each
/// socket's `signalDescriptor`), for loops that own dozens of sockets. `zmq_poll` looks at every
/// socket on every call, in libzmq and again in the kernel.
///
/// The signal descriptor is edge-like: it fires when libzmq has news for the socket and is cleared
/// when the socket processes it (any call on the socket may do that, sends included). So a socket
/// that is reported must be drained until `canReceive` is false, and after sending on a socket the
/// owner must ask `canReceive` and, if true, `markReady` it — the send may have swallowed the edge.
/// Tokens are the owner's own numbers for its sockets.
/// Not Sendable: like the sockets it watches, it belongs to one thread.
public final class ReadinessPoller {
    #if os(Linux)
    private let epoll: Int32
    private var events: [epoll_event]
    #else
    private var fallback = Poller()
    private var fallbackTokens: [Int] = []
    #endif
    /// Tokens reported ready without waiting (see `markReady`).
    private var forced: [Int] = []

    public init(capacity: Int = 256) {
        #if os(Linux)
        epoll = epoll_create1(Int32(EPOLL_CLOEXEC))
        precondition(epoll >= 0, "epoll_create1 failed")
        events = Array(repeating: epoll_event(), count: capacity)
        #endif
    }

    deinit {
        #if os(Linux)
        close(epoll)
        #endif
    }

    /// Watches `socket` under `token`.
    public func add(_ socket: Socket, token: Int) throws {
        #if os(Linux)
        try add(fileDescriptor: try socket.signalDescriptor, token: token)
        #else
        fallback.add(socket)
        fallbackTokens.append(token)
        #endif
    }

    /// Watches a plain descriptor (a `Waker`'s) under `token`.
    public func add(fileDescriptor: Int32, token: Int) throws {
        #if os(Linux)
        var event = epoll_event()
        event.events = EPOLLIN.rawValue
        event.data.u64 = UInt64(token)
        guard epoll_ctl(epoll, EPOLL_CTL_ADD, fileDescriptor, &event) == 0 else {
            throw ZMQError(code: errno, operation: "epoll_ctl ADD")
        }
        #else
        fallback.add(fileDescriptor: fileDescriptor)
        fallbackTokens.append(token)
        #endif
    }

    /// Stops watching `socket` (call before closing it).
    public func remove(_ socket: Socket) {
        #if os(Linux)
        if let fd = try? socket.signalDescriptor {
            var event = epoll_event()
            _ = epoll_ctl(epoll, EPOLL_CTL_DEL, fd, &event)
        }
        #else
        // The fallback is rebuilt by its owner; nothing to do per socket.
        #endif
    }

    /// Reports `token` ready at the next `wait`, which then does not block.
    public func markReady(_ token: Int) { forced.append(token) }

    /// Waits up to `timeoutMilliseconds` (-1: no limit; 0 when something was marked ready) and
    /// returns the tokens that are ready, each once.
    public func wait(timeoutMilliseconds: Int) -> [Int] {
        var ready = forced
        forced.removeAll(keepingCapacity: true)
        let timeout = ready.isEmpty ? Int32(clamping: timeoutMilliseconds) : 0
        #if os(Linux)
        let count = events.withUnsafeMutableBufferPointer { buffer in
            epoll_wait(epoll, buffer.baseAddress, Int32(buffer.count), timeout)
        }
        if count > 0 {
            for index in 0..<Int(count) { ready.append(Int(events[index].data.u64)) }
        }
        #else
        if (try? fallback.poll(timeoutMilliseconds: Int(timeout))) != nil {
            for (index, token) in fallbackTokens.enumerated() where fallback.isReadable(index) { ready.append(token) }
        }
        #endif
        if ready.count > 1 {
            var seen = Set<Int>()
            ready = ready.filter { seen.insert($0).inserted }
        }
        return ready
    }
}
