import CZeroMQ

/// Waits on several sockets and file descriptors at once (zmq_poll).
///
/// The poller keeps the raw socket handles: every socket added must stay open while the poller is used.
/// Like the sockets, a poller belongs to one thread.
public struct Poller {
    private var items: [zmq_pollitem_t] = []

    public init() {}

    /// Watches `socket` for incoming messages; returns its index for `isReadable(_:)`.
    @discardableResult
    public mutating func add(_ socket: Socket) -> Int {
        items.append(zmq_pollitem_t(socket: socket.handle, fd: 0, events: Int16(ZMQ_POLLIN), revents: 0))
        return items.count - 1
    }

    /// Watches a file descriptor (such as a `Waker`'s) for readability; returns its index.
    @discardableResult
    public mutating func add(fileDescriptor: Int32) -> Int {
        items.append(zmq_pollitem_t(socket: nil, fd: fileDescriptor, events: Int16(ZMQ_POLLIN), revents: 0))
        return items.count - 1
    }

    /// Forgets every item (when the set of sockets changes, rebuild the poller).
    public mutating func removeAll() { items.removeAll(keepingCapacity: true) }

    public var count: Int { items.count }

    /// Waits until something is readable or `timeoutMilliseconds` pass (-1 = no limit).
    /// Returns how many items are readable; an interrupted wait returns 0.
    @discardableResult
    public mutating func poll(timeoutMilliseconds: Int) throws -> Int {
        let ready = items.withUnsafeMutableBufferPointer { buffer in
            zmq_poll(buffer.baseAddress, Int32(buffer.count), timeoutMilliseconds)
        }
        if ready < 0 {
            let error = ZMQError.last("zmq_poll")
            if error.isInterrupted { return 0 }
            throw error
        }
        return Int(ready)
    }

    public func isReadable(_ index: Int) -> Bool {
        items[index].revents & Int16(ZMQ_POLLIN) != 0
    }
}
