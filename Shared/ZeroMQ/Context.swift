import CZeroMQ
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A libzmq context: the I/O threads and the registry of inproc endpoints.
///
/// `@unchecked Sendable` is safe: libzmq documents contexts as thread-safe (zmq_ctx_new(3):
/// "A ØMQ context is thread safe and may be shared among as many application threads as
/// necessary"), and the other stored properties are a `Mutex` and a value set once under it.
public final class Context: @unchecked Sendable {
    let handle: UnsafeMutableRawPointer
    private let curveState = Mutex<(security: CurveSecurity, handler: ZAPHandler?)?>(nil)

    /// The process-wide context that every socket uses unless told otherwise.
    public static let shared: Context = {
        // `try!` is deliberate: zmq_ctx_new fails only when the process is out of file descriptors
        // or memory at start-up, and nothing can work without a context.
        try! Context()
    }()

    public init(ioThreads: Int32 = 1) throws {
        guard let handle = zmq_ctx_new() else { throw ZMQError.last("zmq_ctx_new") }
        self.handle = handle
        if zmq_ctx_set(handle, ZMQ_IO_THREADS, ioThreads) != 0 {
            throw ZMQError.last("zmq_ctx_set ZMQ_IO_THREADS")
        }
        // libzmq allows 1023 sockets per context by default; a simulator with thousands of devices,
        // or a client with many lanes, needs more. The ceiling libzmq accepts depends on the
        // process's descriptor limit (see `raiseOpenFileLimit`).
        let ceiling = zmq_ctx_get(handle, ZMQ_SOCKET_LIMIT)
        if ceiling > 0 { _ = zmq_ctx_set(handle, ZMQ_MAX_SOCKETS, min(ceiling, 65_536)) }
    }

    /// Terminates the context. Every socket must be closed first (we close with linger 0,
    /// so this does not hang on unsent messages).
    public func terminate() {
        while zmq_ctx_term(handle) != 0 && zmq_errno() == EINTR {}
    }

    /// From now on, every socket of this context that connects or binds over TCP uses CURVE with
    /// `security`, and over IPC a PLAIN handshake with a `LocalProof` of the same keys; when the
    /// process serves (`security.server`), the ZAP handler that admits clients is running when this
    /// returns, admitting IPC peers that run as this process's user (or root). Call it once, before
    /// the first socket connects.
    /// `onDecision` hears each admission and refusal (to log them).
    @discardableResult
    public func enableCurve(_ security: CurveSecurity, onDecision: @escaping @Sendable (ZAPHandler.Decision) -> Void = { _ in })
        async throws -> ZAPHandler?
    {
        guard zmq_has("curve") != 0 else {
            throw ZMQError(code: ENOTSUP, operation: "CURVE: this libzmq (\(Self.libraryVersion)) was built without it")
        }
        var handler: ZAPHandler?
        if let server = security.server {
            handler = try await ZAPHandler(
                context: self, authorizer: security.authorizer, server: server, localUsers: [UInt32(geteuid()), 0], onDecision: onDecision)
        }
        curveState.withLock { $0 = (security, handler) }
        return handler
    }

    /// The CURVE settings of this context's sockets, nil while they are plain.
    public var curve: CurveSecurity? { curveState.withLock { $0?.security } }

    /// libzmq's version, e.g. "4.3.4".
    public static var libraryVersion: String {
        var major: Int32 = 0
        var minor: Int32 = 0
        var patch: Int32 = 0
        zmq_version(&major, &minor, &patch)
        return "\(major).\(minor).\(patch)"
    }
}
