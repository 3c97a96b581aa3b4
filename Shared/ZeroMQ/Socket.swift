import CZeroMQ

/// One frame of a ZeroMQ message.
public typealias Frame = [UInt8]

extension Array where Element == UInt8 {
    /// The UTF-8 bytes of `string` as a frame.
    @inlinable public init(frame string: String) { self = Array(string.utf8) }
    /// The frame as text, if it is valid UTF-8.
    public var utf8String: String? { String(validating: self, as: UTF8.self) }
}

/// A ZeroMQ socket.
///
/// Not `Sendable`, on purpose: a libzmq socket is not thread-safe, so each one is created, used and
/// closed by the single thread that owns it (see `OwnedThread`). Async code talks to that thread
/// through a `Mailbox`, never to the socket.
public final class Socket {
    let handle: UnsafeMutableRawPointer
    public let type: SocketType
    let context: Context
    /// After `close()`, every call throws instead of touching the freed libzmq handle.
    public private(set) var isClosed = false

    public init(_ type: SocketType, context: Context = .shared) throws {
        guard let handle = zmq_socket(context.handle, type.rawValue) else {
            throw ZMQError.last("zmq_socket \(type)")
        }
        self.handle = handle
        self.type = type
        self.context = context
    }

    deinit { close() }

    /// Closes the socket with linger 0: unsent messages are dropped, so `zmq_ctx_term` never hangs.
    public func close() {
        guard !isClosed else { return }
        isClosed = true
        var zero: Int32 = 0
        zmq_setsockopt(handle, ZMQ_LINGER, &zero, MemoryLayout<Int32>.size)
        zmq_close(handle)
    }

    // MARK: Endpoints

    /// With CURVE on, whether this socket admits any client key (set before `bind`): for an
    /// endpoint that faces the internet, such as the device ingest, where phones bring keys of
    /// their own and prove who they are inside the connection. Otherwise the context's
    /// `CurveAuthorizer` decides.
    public var admitsAnyCurveKey = false

    public func bind(_ endpoint: String) throws {
        if let curve = context.curve, Self.leavesProcess(endpoint) {
            guard let server = curve.server else {
                throw ZMQError(
                    code: EACCES,
                    operation: "bind \(type) to \(endpoint): CURVE is on and this process has no server key, so it may not listen")
            }
            let domain = admitsAnyCurveKey ? ZAPHandler.anyKeyDomain : ZAPHandler.domain
            if Self.staysOnHost(endpoint) { try becomeLocalServer(domain: domain) } else { try becomeCurveServer(server, domain: domain) }
        }
        guard zmq_bind(handle, endpoint) == 0 else { throw ZMQError.last("bind \(type) to \(endpoint)") }
    }

    public func connect(_ endpoint: String) throws {
        if let curve = context.curve, Self.leavesProcess(endpoint) {
            if Self.staysOnHost(endpoint) {
                try becomeLocalClient(curve.identity, serverKey: curve.serverKey)
            } else {
                try becomeCurveClient(curve.identity, serverKey: curve.serverKey)
            }
        }
        guard zmq_connect(handle, endpoint) == 0 else { throw ZMQError.last("connect \(type) to \(endpoint)") }
    }

    /// TCP and IPC endpoints are secured when CURVE is on; `inproc://` never leaves the process.
    static func leavesProcess(_ endpoint: String) -> Bool { !endpoint.hasPrefix("inproc://") }
    /// An `ipc://` endpoint is a Unix socket: its connections authenticate once (`LocalProof`),
    /// their frames are not sealed.
    static func staysOnHost(_ endpoint: String) -> Bool { endpoint.hasPrefix("ipc://") }

    public func disconnect(_ endpoint: String) throws {
        guard zmq_disconnect(handle, endpoint) == 0 else { throw ZMQError.last("disconnect \(type) from \(endpoint)") }
    }

    /// The endpoint this socket last bound or connected, with wildcard ports resolved
    /// (`tcp://127.0.0.1:*` → `tcp://127.0.0.1:41234`).
    public var lastEndpoint: String {
        get throws { try stringOption(ZMQ_LAST_ENDPOINT, name: "ZMQ_LAST_ENDPOINT") }
    }

    // MARK: Sending

    /// Sends one frame. Returns false only when `dontWait` is set and the message cannot be queued now.
    @discardableResult
    public func send(_ bytes: UnsafeRawBufferPointer, more: Bool = false, dontWait: Bool = false) throws -> Bool {
        guard !isClosed else { throw ZMQError(code: ENOTSOCK, operation: "send on closed \(type)") }
        var flags: Int32 = 0
        if more { flags |= ZMQ_SNDMORE }
        if dontWait { flags |= ZMQ_DONTWAIT }
        while true {
            if zmq_send(handle, bytes.baseAddress, bytes.count, flags) >= 0 { return true }
            let error = ZMQError.last("send on \(type)")
            if error.isInterrupted { continue }
            if error.isAgain && dontWait { return false }
            throw error
        }
    }

    /// Sends one frame. Returns false only when `dontWait` is set and the message cannot be queued now.
    @discardableResult
    public func send(_ frame: Frame, more: Bool = false, dontWait: Bool = false) throws -> Bool {
        try frame.withUnsafeBytes { try send($0, more: more, dontWait: dontWait) }
    }

    /// Sends a multipart message atomically. With `dontWait`, returns false when the first frame
    /// could not be queued (then nothing was sent; libzmq accepts the rest once the first is in).
    @discardableResult
    public func send(message frames: [Frame], dontWait: Bool = false) throws -> Bool {
        precondition(!frames.isEmpty, "a ZeroMQ message has at least one frame")
        let last = frames.count - 1
        for (index, frame) in frames.enumerated() {
            let queued = try send(frame, more: index < last, dontWait: dontWait && index == 0)
            if !queued { return false }
        }
        return true
    }

    // MARK: Receiving

    /// Receives one whole multipart message. Returns nil only when `dontWait` is set and nothing is waiting.
    public func receive(dontWait: Bool = false) throws -> [Frame]? {
        try receiveMessage(dontWait: dontWait, property: nil)?.frames
    }

    /// Receives one whole multipart message and the value of a property its sender's connection
    /// carries (one its socket announced with `setMetadata`, or libzmq's own); nil when it has none.
    /// Returns nil only when `dontWait` is set and nothing is waiting.
    public func receive(dontWait: Bool = false, property: String) throws -> (frames: [Frame], value: String?)? {
        try receiveMessage(dontWait: dontWait, property: property)
    }

    /// Receives one whole multipart message and the name its sender's CURVE key was admitted under
    /// (the ZAP handler's user id, libzmq's `User-Id` property; nil on a connection without ZAP, such
    /// as a plain TCP or `inproc://` one). Returns nil only when `dontWait` is set and nothing is waiting.
    public func receiveWithSender(dontWait: Bool = false) throws -> (frames: [Frame], sender: String?)? {
        try receiveMessage(dontWait: dontWait, property: "User-Id").map { ($0.frames, $0.value) }
    }

    private func receiveMessage(dontWait: Bool, property: String?) throws -> (frames: [Frame], value: String?)? {
        guard !isClosed else { throw ZMQError(code: ENOTSOCK, operation: "receive on closed \(type)") }
        var message = zmq_msg_t()
        zmq_msg_init(&message)
        defer { zmq_msg_close(&message) }
        var frames: [Frame] = []
        var value: String?
        var flags: Int32 = dontWait ? ZMQ_DONTWAIT : 0
        while true {
            if zmq_msg_recv(&message, handle, flags) < 0 {
                let error = ZMQError.last("receive on \(type)")
                if error.isInterrupted { continue }
                if error.isAgain && frames.isEmpty && dontWait { return nil }
                throw error
            }
            // The first frame that has it: a ROUTER's routing-id frame is made by libzmq itself and
            // carries no metadata in libzmq 4.3.4 (Debian's), the frames after it do.
            if let property, value == nil { value = zmq_msg_gets(&message, property).map { String(cString: $0) } }
            frames.append(Frame(UnsafeRawBufferPointer(start: zmq_msg_data(&message), count: zmq_msg_size(&message))))
            if zmq_msg_more(&message) == 0 { return (frames, value) }
            // The rest of a multipart message is already here: libzmq delivers messages atomically.
            flags = 0
        }
    }

    /// The `User-Id` of a received message: a C string owned by the connection's metadata, valid
    /// while the message is.
    static func userID(of message: inout zmq_msg_t) -> UnsafePointer<CChar>? {
        zmq_msg_gets(&message, "User-Id")
    }

    /// Moves one whole message from this socket to `destination` without copying its bodies
    /// (zmq_msg_recv → zmq_msg_send). Returns the number of frames moved, 0 if nothing was waiting.
    /// This is the forwarder's hot path: it runs at libzmq's own speed.
    public func forward(to destination: Socket) throws -> Int {
        var message = zmq_msg_t()
        zmq_msg_init(&message)
        defer { zmq_msg_close(&message) }
        var frames = 0
        while true {
            if zmq_msg_recv(&message, handle, frames == 0 ? ZMQ_DONTWAIT : 0) < 0 {
                let error = ZMQError.last("receive on \(type)")
                if error.isInterrupted { continue }
                if error.isAgain && frames == 0 { return 0 }
                throw error
            }
            frames += 1
            let more = zmq_msg_more(&message) != 0
            while zmq_msg_send(&message, destination.handle, more ? ZMQ_SNDMORE : 0) < 0 {
                let error = ZMQError.last("send on \(destination.type)")
                if !error.isInterrupted { throw error }
            }
            if !more { return frames }
        }
    }

}

extension Socket {
    /// As `forward(to:)`, asking `admit` about each message first, with its first frame and its
    /// sender's `User-Id` (nil without ZAP): a message it refuses is read to its end and dropped.
    /// A one-frame message is offered to `divert` first, which may take it (true: it is then not
    /// forwarded). Returns the frames moved (0 for a refused or diverted message) and whether a
    /// message was refused; nil when nothing was waiting.
    public func forward(
        to destination: Socket, admit: (_ firstFrame: UnsafeRawBufferPointer, _ sender: UnsafePointer<CChar>?) -> Bool,
        divert: (_ frame: UnsafeRawBufferPointer, _ sender: UnsafePointer<CChar>?) throws -> Bool = { _, _ in false }
    ) throws -> (frames: Int, refused: Bool)? {
        var message = zmq_msg_t()
        zmq_msg_init(&message)
        defer { zmq_msg_close(&message) }
        var frames = 0
        var admitted = true
        while true {
            if zmq_msg_recv(&message, handle, frames == 0 ? ZMQ_DONTWAIT : 0) < 0 {
                let error = ZMQError.last("receive on \(type)")
                if error.isInterrupted { continue }
                if error.isAgain && frames == 0 { return nil }
                throw error
            }
            let more = zmq_msg_more(&message) != 0
            if frames == 0 {
                let first = UnsafeRawBufferPointer(start: zmq_msg_data(&message), count: zmq_msg_size(&message))
                if !more, try divert(first, Self.userID(of: &message)) { return (0, false) }
                admitted = admit(first, Self.userID(of: &message))
            }
            frames += 1
            if admitted {
                while zmq_msg_send(&message, destination.handle, more ? ZMQ_SNDMORE : 0) < 0 {
                    let error = ZMQError.last("send on \(destination.type)")
                    if !error.isInterrupted { throw error }
                }
            }
            if !more { return (admitted ? frames : 0, !admitted) }
        }
    }

    /// libzmq's own `zmq_proxy` between this socket and `backend`: blocks until the context ends.
    /// The benchmark's baseline — the plain C forwarder that `ride-bus` is measured against.
    public func runProxy(to backend: Socket) throws {
        guard zmq_proxy(handle, backend.handle, nil) == 0 else { throw ZMQError.last("zmq_proxy") }
    }
}
